"""`tuiagent sandbox status [--json]` and `tuiagent sandbox run FILE [--timeout S] [--json]`."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_agent.commands.failures import EXIT_USAGE, Subparsers, report

if TYPE_CHECKING:  # imported where used: every `tuiagent` start (the TUI's too) registers these commands
    from tui_agent.core.project import Project
    from tui_agent.core.sandbox import RunResult, SandboxPolicy

EXIT_TIMEOUT = 124
EXIT_SANDBOX_REFUSED = 3


def register(parser: argparse.ArgumentParser, subparsers: Subparsers) -> None:
    group = subparsers.add_parser("sandbox", help="the isolation agent code runs under")
    actions = group.add_subparsers(dest="sandbox_command", required=True)
    status = actions.add_parser("status", help="the tier in force and what each protection covers")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.add_argument("--tier", choices=("bubblewrap", "rlimits"), help="describe this tier instead of the best one")
    status.set_defaults(handler=handle_status)
    run = actions.add_parser("run", help="run a Python file exactly the way agent code runs (cwd = the project)")
    run.add_argument("file", type=Path)
    run.add_argument("--timeout", type=positive_seconds, default=None, help="wall-clock seconds (default: the policy's)")
    run.add_argument("--tier", choices=("bubblewrap", "rlimits"), help="force a tier (default: the strongest)")
    run.add_argument("--network", action="store_true", help="allow network access (off by default)")
    run.add_argument("--json", action="store_true", help="one JSON object: ok, value, error, stdout, stderr, exit code")
    run.set_defaults(handler=handle_run)


MAX_TIMEOUT_S = 24 * 3600.0


def positive_seconds(text: str) -> float:
    """An argparse type: a finite number of seconds above 0 (at most a day)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value) or value <= 0 or value > MAX_TIMEOUT_S:
        raise argparse.ArgumentTypeError(f"{text!r} must be a number of seconds above 0 and at most {MAX_TIMEOUT_S:.0f}")
    return value


def handle_status(args: argparse.Namespace) -> int:
    from tui_agent.core.project import Project
    from tui_agent.core.sandbox import SandboxUnavailable

    project = Project.at(args.project)
    try:
        info = asyncio.run(_describe(project, args.tier))
    except SandboxUnavailable as exc:
        return report(f"sandbox: {exc}", "sandbox", EXIT_SANDBOX_REFUSED, as_json=args.json)
    if args.json:
        print(json.dumps(info, indent=2))
        return 0
    print(f"tier: {info['tier']} ({'strong' if info['strong'] else 'fallback'})")
    if info.get("min_level"):
        print(f"sandbox.min_level: {info['min_level']}")
    if info.get("warning"):
        print(f"WARNING: {info['warning']}")
    width = max(len(name) for name in info["protections"])
    for name, what in info["protections"].items():
        print(f"  {name.ljust(width)}  {what}")
    print("protected paths (read-only for agent code, even in runs that may write the project; "
          "write_file/edit_file always ask):")
    for path in info.get("protected_paths", []):
        print(f"  {path}")
    if info.get("run_attribution"):
        print(f"what a run wrote (for /undo): {info['run_attribution']}")
    if info.get("toolchain"):
        print_toolchain(info["toolchain"])
    if info.get("host_doors"):
        print("host doors (tuiagent's own code between the project and this machine) and what each refuses:")
        width = max(len(name) for name in info["host_doors"])
        for name, what in info["host_doors"].items():
            print(f"  {name.ljust(width)}  {what}")
    if info["expected_misses"]:
        print("expected misses of this tier:")
        for miss in info["expected_misses"]:
            print(f"  - {miss}")
    return 0


def print_notices(notices: list[str]) -> None:
    """One line each on stderr; file names in them come from agent code, so control characters are shown, not sent."""
    from tui_agent.core.textsafety import for_terminal

    for notice in notices:
        print(for_terminal(sys.stderr, f"tuiagent: {notice}"), file=sys.stderr)


def print_toolchain(toolchain: dict[str, Any]) -> None:
    """What agent code sees of the user's toolchain, and what stays hidden (names only)."""
    visible, hidden = toolchain["visible"], toolchain["hidden"]
    print("toolchain visible to run_shell, run_python and tools:")
    print(f"  virtualenv  {visible['virtualenv'] or '(none found: .venv, venv, uv, poetry, VIRTUAL_ENV)'}")
    print(f"  PATH        {':'.join(visible['PATH'])}")
    print(f"  read-only   {', '.join(visible['read_only_folders']) or '(none)'}")
    print(f"  variables   {', '.join(visible['variables']) or '(none)'}")
    print("hidden from agent code:")
    readable = "" if toolchain["secret_paths_hidden"] else " (READABLE on this tier: no mount namespace)"
    print(f"  secret paths{readable}  {', '.join(hidden['secret_paths']) or '(none on this machine)'}")
    if hidden["masked_inside_visible_folders"]:
        print(f"  masked inside     {', '.join(hidden['masked_inside_visible_folders'])}")
    print(f"  secret variables  {', '.join(hidden['secret_variables']) or '(none set)'}")
    print(f"  other variables   {hidden['other_variables']}")
    for problem in toolchain["problems"]:
        print(f"  refused: {problem}")


async def _describe(project: Project, tier: str | None) -> dict[str, Any]:
    from tui_agent.commands.sandbox_status import describe
    from tui_agent.core.project import Project
    from tui_agent.core.sandbox import Sandbox, protected_paths

    with tempfile.TemporaryDirectory(prefix=f"tuiagent-status-{os.getpid()}-") as scratch:
        # Without .agent/ yet, describe from a scratch folder: asking for the status creates nothing in the project.
        where = project if project.agent_dir.is_dir() else Project.at(scratch)
        sandbox = await Sandbox.start(where, tier=tier, warm_workers=0)
        print_notices(sandbox.notices)
        try:
            info = describe(sandbox)
        finally:
            await sandbox.aclose()
    info["protected_paths"] = protected_paths(project.root)
    info["min_level"] = project.load_settings().sandbox_min_level
    return info


def handle_run(args: argparse.Namespace) -> int:
    from tui_agent.core.project import Project
    from tui_agent.core.sandbox import SandboxPolicy, SandboxUnavailable

    project = Project.at(args.project)
    file: Path = args.file
    if not file.is_file():
        return report(f"sandbox run: no such file: {file}", "usage", EXIT_USAGE, as_json=args.json)
    policy = SandboxPolicy(network=args.network)
    if args.timeout is not None:
        policy = policy.with_(timeout_s=args.timeout, cpu_s=max(1, int(args.timeout) + 1))
    try:
        result = asyncio.run(_run_file(project, file, policy, args.tier))
    except SandboxUnavailable as exc:
        return report(f"sandbox: {exc}", "sandbox", EXIT_SANDBOX_REFUSED, as_json=args.json)
    if args.json:
        return print_run_json(result)
    from tui_agent.core.textsafety import for_terminal

    sys.stdout.write(for_terminal(sys.stdout, result.stdout))
    sys.stdout.flush()
    sys.stderr.write(for_terminal(sys.stderr, result.stderr))
    if not result.ok and result.error and not result.error.startswith("SystemExit:"):
        sys.stderr.write(for_terminal(sys.stderr, result.error if result.error.endswith("\n") else result.error + "\n"))
    sys.stderr.flush()
    return exit_status(result)


def print_run_json(result: RunResult) -> int:
    data = result.to_dict()
    code = exit_status(result)
    if code:
        data = {**data, "error": result.error or f"exit code {code}", "stage": result.error_kind or "run"}
    print(json.dumps(data, indent=2, default=str))
    return code


def exit_status(result: RunResult) -> int:
    if result.error_kind == "timeout":
        return EXIT_TIMEOUT
    if result.exit_code is not None and result.exit_code >= 0 and (result.exit_code or result.ok):
        return result.exit_code
    return 0 if result.ok else 1


async def _run_file(project: Project, file: Path, policy: SandboxPolicy, tier: str | None) -> RunResult:
    from tui_agent.core.sandbox import Sandbox, Snippet

    resolved = file.resolve()
    code = resolved.read_text(encoding="utf-8")
    sandbox = await Sandbox.start(project, tier=tier, warm_workers=0)
    print_notices(sandbox.notices)  # what a run interrupted earlier had left, moved away at this start
    try:
        return await sandbox.run(Snippet(code, script_path=str(resolved)), policy)
    finally:
        await sandbox.aclose()
