"""`tuiagent sandbox status [--json]` and `tuiagent sandbox run FILE [--timeout S]`."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported where used: the TUI's start must not pay for them
    from tui_agent.core.project import Project
    from tui_agent.core.sandbox import RunResult, SandboxPolicy

EXIT_TIMEOUT = 124
EXIT_SANDBOX_REFUSED = 3


def register(parser: argparse.ArgumentParser, subparsers: Any) -> None:
    group = subparsers.add_parser("sandbox", help="the isolation agent code runs under")
    actions = group.add_subparsers(dest="sandbox_command", required=True)
    status = actions.add_parser("status", help="the tier in force and what each protection covers")
    status.add_argument("--json", action="store_true", help="machine-readable output")
    status.add_argument("--tier", choices=("bubblewrap", "rlimits"), help="describe this tier instead of the best one")
    status.set_defaults(handler=handle_status)
    run = actions.add_parser("run", help="run a Python file exactly the way agent code runs (cwd = the project)")
    run.add_argument("file", type=Path)
    run.add_argument("--timeout", type=float, default=None, help="wall-clock seconds (default: the policy's)")
    run.add_argument("--tier", choices=("bubblewrap", "rlimits"), help="force a tier (default: the strongest)")
    run.add_argument("--network", action="store_true", help="allow network access (off by default)")
    run.set_defaults(handler=handle_run)


def handle_status(args: argparse.Namespace) -> int:
    from tui_agent.core.project import ConfigError, Project
    from tui_agent.core.sandbox import SandboxUnavailable

    project = Project.at(args.project)
    try:
        info = asyncio.run(_describe(project, args.tier))
    except (SandboxUnavailable, ConfigError) as exc:
        print(f"tuiagent sandbox: {exc}", file=sys.stderr)
        return EXIT_SANDBOX_REFUSED
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
    if info["expected_misses"]:
        print("expected misses of this tier:")
        for miss in info["expected_misses"]:
            print(f"  - {miss}")
    return 0


async def _describe(project: Project, tier: str | None) -> dict[str, Any]:
    from tui_agent.core.sandbox import Sandbox

    sandbox = await Sandbox.start(project, tier=tier, warm_workers=0)
    try:
        info = sandbox.describe()
        info["min_level"] = project.load_settings().sandbox_min_level
        return info
    finally:
        await sandbox.aclose()


def handle_run(args: argparse.Namespace) -> int:
    from tui_agent.core.project import ConfigError, Project
    from tui_agent.core.sandbox import SandboxPolicy, SandboxUnavailable

    project = Project.at(args.project)
    file: Path = args.file
    if not file.is_file():
        print(f"tuiagent sandbox run: no such file: {file}", file=sys.stderr)
        return 2
    policy = SandboxPolicy(network=args.network)
    if args.timeout is not None:
        policy = policy.with_(timeout_s=args.timeout, cpu_s=max(1, int(args.timeout) + 1))
    try:
        result = asyncio.run(_run_file(project, file, policy, args.tier))
    except (SandboxUnavailable, ConfigError) as exc:
        print(f"tuiagent sandbox: {exc}", file=sys.stderr)
        return EXIT_SANDBOX_REFUSED
    sys.stdout.write(result.stdout)
    sys.stdout.flush()
    sys.stderr.write(result.stderr)
    if not result.ok and result.error and not result.error.startswith("SystemExit:"):
        sys.stderr.write(result.error if result.error.endswith("\n") else result.error + "\n")
    sys.stderr.flush()
    return exit_status(result)


def exit_status(result: RunResult) -> int:
    if result.error_kind == "timeout":
        return EXIT_TIMEOUT
    if result.exit_code is not None and result.exit_code >= 0 and (result.exit_code or result.ok):
        return result.exit_code
    return 0 if result.ok else 1


async def _run_file(project: Project, file: Path, policy: SandboxPolicy, tier: str | None) -> RunResult:
    from tui_agent.core.sandbox import Sandbox

    sandbox = await Sandbox.start(project, tier=tier, warm_workers=0)
    try:
        return await sandbox.run_file(file, policy=policy)
    finally:
        await sandbox.aclose()
