"""`tuiagent tools list|show|history|diff|revert|prune|restore|run|drift|export|import-skill`, each with `--json`."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from pathlib import Path
from collections.abc import Awaitable, Callable
from typing import Any

from tui_agent.core.textsafety import escaped, escaped_lines
from tui_agent.commands import tools_commit, tools_skills, tools_tending
from tui_agent.commands.catalog_cli import Result, add_version_actions, error_result, name_refusal, need, print_result
from tui_agent.commands.failures import EXIT_USAGE, Subparsers, report
from tui_agent.commands.tools_history import history_result
from tui_agent.core.errors import TuiAgentError
from tui_agent.core.project import Project
from tui_agent.core.content import JsonObject

class UsageError(TuiAgentError):
    """Bad input on the command line (exit code 2)."""


def register(parser: argparse.ArgumentParser, subparsers: Subparsers) -> None:
    tools = subparsers.add_parser("tools", help="inspect and manage the project's tool catalog")
    tools.add_argument("--init-git", action="store_true", help="create a git repository when there is none")
    actions = tools.add_subparsers(dest="tools_command", required=True)

    def action(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = actions.add_parser(name, help=help_text)
        sub.add_argument("--init-git", action="store_true", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        sub.add_argument("--json", action="store_true", help="machine-readable output")
        sub.set_defaults(handler=handle)
        return sub

    action("list", "every tool with status, calls, failures, last use and description")
    action("show", "a tool's status, schema and source").add_argument("name")
    add_version_actions(action, "tool")
    run = action("run", "call a tool in the sandbox")
    run.add_argument("name")
    run.add_argument("--arg", action="append", default=[], metavar="K=V", help="an argument (JSON value or plain text)")
    run.add_argument("--allow-network", action="store_true", help="let a tool that declares NETWORK = True use the network")
    run.add_argument("--allow-writes", action="store_true",
                     help="let a tool that declares WRITES = True change project files (otherwise the project is read-only)")
    run.add_argument("--args", default=None, metavar="JSON", dest="call_json",
                     help="the arguments as one JSON object (with --arg too: --arg wins for its key)")
    drift = action("drift", "dependency files changed since a tool was written, and its tests re-run")
    drift.add_argument("name", nargs="?")
    drift.add_argument("--accept", action="store_true",
                       help="mark NAME's drift reviewed: its dependency files as they are now become the reference "
                            "(committed in .agent/drift-reviews.json)")
    tools_tending.register_actions(action)
    tools_skills.register_actions(action)
    action("commit", tools_commit.HELP)


def handle(args: argparse.Namespace) -> int:
    refusal = name_refusal(args, "tool")
    if refusal:
        return report(refusal, "usage", EXIT_USAGE, as_json=wants_json_output(args))
    try:
        return asyncio.run(run_command(args))
    except UsageError as exc:
        return report(f"tuiagent tools {args.tools_command}: {exc}", "usage", EXIT_USAGE, as_json=wants_json_output(args))


def wants_json_output(args: argparse.Namespace) -> bool:
    return bool(args.json)


def make_ask_init_git(init_git: bool) -> Callable[[Project], bool]:
    def ask(project: Project) -> bool:
        if init_git:
            return True
        if sys.stdin.isatty():
            answer = input(f"{project.root} is not in a git repository. Create one for the tool catalog? [y/N] ")
            return answer.strip().lower() in ("y", "yes")
        print(f"tuiagent: {project.root} is not in a git repository; tool changes are not committed. "
              "Pass --init-git to create one.", file=sys.stderr)
        return False
    return ask


async def run_command(args: argparse.Namespace) -> int:
    from tui_agent.core.catalog.api import Catalog
    from tui_agent.core.catalog.errors import PipelineError
    from tui_agent.core.sandbox import Sandbox
    from tui_agent.commands.tools_untrusted import preview_untrusted
    from tui_agent.commands.trustgate import require_trust

    command = args.tools_command
    want_json = wants_json_output(args)
    call_args = parse_call_args(args) if command == "run" else {}
    project = Project.at(args.project)
    if (previewed := preview_untrusted(args)) is not None:  # list / show / history / diff: files and git only
        return previewed
    require_trust(args, f"tuiagent tools {command}")  # an untrusted project's tools are never imported or tested
    if command == "commit":
        args.released_hold = tools_commit.release_hold(project)
    sandbox = await Sandbox.start(project)
    try:
        catalog = await Catalog.open(project, sandbox, ask_init_git=make_ask_init_git(getattr(args, "init_git", False)))
        if catalog.load_report.git_message and "deferred" in catalog.load_report.git_message:
            print(f"tuiagent: {catalog.load_report.git_message}", file=sys.stderr)
        try:
            result = await COMMANDS[command](catalog, args, call_args)
        except PipelineError as error:
            result = error_result(error)
        finally:
            for notice in [*catalog.state.notices, *sandbox.audit.notices, *sandbox.notices]:
                print(f"tuiagent: {escaped(notice)}", file=sys.stderr)
            await catalog.aclose()
    finally:
        await sandbox.aclose()
    if command == "repair" and isinstance(result[0], dict) and result[0].get("needs_repair") and not args.print_prompt:
        return await hand_to_agent(args, result[0]["prompt"])
    return print_result(result, want_json)


async def hand_to_agent(args: argparse.Namespace, prompt: str) -> int:
    """Run the agent headless on PROMPT with the top-level options (--model, --yes, --output-format, ...)."""
    from tui_agent.commands.run import run_headless

    args.prompt = prompt
    return await run_headless(args)


def parse_call_args(args: argparse.Namespace) -> JsonObject:
    values: JsonObject = {}
    if args.call_json is not None:
        try:
            loaded = json.loads(args.call_json)
        except ValueError as exc:  # not JSON, or an integer too long to convert
            raise UsageError(f"--args is not valid JSON: {exc}") from exc
        if not isinstance(loaded, dict):
            raise UsageError("--args must be a JSON object")
        values.update(loaded)
    given: set[str] = set()
    for item in args.arg:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--arg needs KEY=VALUE, got {item!r}")
        if key in given:
            raise UsageError(f"--arg {key} is given twice; pass each argument once")
        given.add(key)
        values[key] = raw  # typed against the schema once the tool is known
    return values


def typed_args(schema: JsonObject, raw: JsonObject, from_cli: set[str]) -> JsonObject:
    """`--arg` values are text: parse them as JSON unless the parameter is a string."""
    properties = schema.get("properties")
    typed = dict(raw)
    for key in from_cli:
        spec = properties.get(key) if isinstance(properties, dict) else None
        kind = spec.get("type") if isinstance(spec, dict) else None
        text = raw[key]  # an --arg value: text
        if kind == "string" or (isinstance(kind, list) and "string" in kind) or not isinstance(text, str):
            continue
        try:
            typed[key] = json.loads(text)
        except ValueError:  # not JSON (or a number too long to convert): the text itself is the value, as typed
            pass
    return typed


def ago(timestamp: float | None) -> str:
    if timestamp is None:
        return "never"
    seconds = max(0, int(time.time() - timestamp))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit} ago"
    return f"{seconds}s ago"


def need_tool(catalog: Any, name: str) -> Any:
    return need(catalog.get(name), "tool", name)


def access(spec: Any) -> str:
    """What a tool may do beyond reading the project: `writes`, `network`, both, or `-`."""
    if spec is None:
        return "-"
    return ",".join(flag for flag, on in (("writes", spec.writes), ("network", spec.network)) if on) or "-"


def access_notes(spec: Any) -> list[str]:
    """The `show` line: what the tool may touch and the flag `run` needs for it."""
    notes = ["writes project files (WRITES = True; `run` needs --allow-writes)" if spec.writes else "project read-only"]
    if spec.network:
        notes.append("network (NETWORK = True; `run` needs --allow-network)")
    return notes


async def cmd_list(catalog: Any, args: argparse.Namespace, _: JsonObject) -> Result:
    await catalog.recheck_drift()  # a drifted tool's own tests decide between `drifted` and `drifted · failing`
    records = catalog.tools()
    rows = [("NAME", "STATUS", "CALLS", "FAILS", "ACCESS", "LAST USED", "DESCRIPTION")]
    for r in records:
        description = r.description or (r.error.message if r.error else "")
        if r.error is not None and r.error.stage == "conflict":
            description = f"{r.error.message} (line {r.error.line}); serving the last good version"
        rows.append((r.name, r.status_label, str(r.calls), str(r.failures), access(r.spec), ago(r.last_used), escaped(description[:70])))
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    lines = ["  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row[:6])) + "  " + row[6] for row in rows]
    text = "\n".join(lines) if records else "no tools yet (.agent/tools/ is empty)"
    sparse = sorted(Path(rel).stem for rel, why in catalog.load_report.refused.items() if "sparse" in why)
    if sparse:
        text += (f"\n{len(sparse)} tool{'s' if len(sparse) != 1 else ''} committed but outside your sparse checkout "
                 f"(not deleted, not loaded): {', '.join(sparse)}")
    return [r.to_dict() for r in records], text, 0


async def cmd_show(catalog: Any, args: argparse.Namespace, _: JsonObject) -> Result:
    record = need_tool(catalog, args.name)
    source = catalog.source(args.name) or ""
    data = record.to_dict() | {"source": source}
    lines = [f"{record.name}  [{record.status_label}]  {escaped(record.description)}", f"file: {escaped(str(record.path))}",
             f"commit: {record.commit or 'none'}   calls: {record.calls}   failures: {record.failures}   last used: {ago(record.last_used)}"]
    if record.error:
        lines.append(f"error [{record.error.stage}]: {record.error.message}" + (f" (line {record.error.line})" if record.error.line else ""))
    if record.spec:
        lines.append("input schema: " + json.dumps(record.spec.input_schema))
        if record.spec.depends_on:
            lines.append("depends on: " + ", ".join(record.spec.depends_on))
        lines.append("access: " + ", ".join(access_notes(record.spec)))
    return data, "\n".join([*(escaped(line) for line in lines), "", escaped_lines(source)]), 0


async def cmd_history(catalog: Any, args: argparse.Namespace, _: JsonObject) -> Result:
    entries = catalog.history(args.name)
    if not entries and catalog.get(args.name) is None:
        need_tool(catalog, args.name)
    return history_result(args.name, entries, catalog.git.shallow_note())


async def cmd_diff(catalog: Any, args: argparse.Namespace, _: JsonObject) -> Result:
    diff = catalog.diff(args.name, args.rev)
    return {"name": args.name, "rev": args.rev, "diff": diff}, escaped_lines(diff.rstrip("\n")) or "no differences", 0


def change_text(verb: str, name: str, outcome_message: str | None) -> str:
    return f"{verb} {name}" + (f" ({outcome_message})" if outcome_message else "")


async def cmd_revert(catalog: Any, args: argparse.Namespace, _: JsonObject) -> Result:
    need_tool(catalog, args.name) if not catalog.project.tool_path(args.name).exists() else None
    record = (await catalog.revert(args.name, args.rev)).record
    note = catalog.pipeline.last_commit_note
    return record.to_dict() | {"git": note}, change_text("reverted", args.name, note), 0


async def cmd_prune(catalog: Any, args: argparse.Namespace, _: JsonObject) -> Result:
    change = await catalog.prune(args.name)
    return {"name": args.name, "committed": change.committed, "commit": change.commit, "git": change.message}, \
        change_text("pruned", args.name, change.message), 0


async def cmd_restore(catalog: Any, args: argparse.Namespace, _: JsonObject) -> Result:
    record = (await catalog.restore(args.name)).record
    note = catalog.pipeline.last_commit_note
    return record.to_dict() | {"git": note}, change_text("restored", args.name, note), 0


async def cmd_run(catalog: Any, args: argparse.Namespace, call_args: JsonObject) -> Result:
    record = need_tool(catalog, args.name)
    if record.spec is None:
        from tui_agent.core.catalog.errors import PipelineError
        raise PipelineError("missing", f"{args.name} has no good version to run: {record.error.message if record.error else ''}")
    from_cli = {item.partition("=")[0] for item in args.arg}
    if record.spec.network and not args.allow_network:
        print(f"tuiagent: {args.name} declares NETWORK = True; running without network (pass --allow-network)",
              file=sys.stderr)
    if record.spec.writes and not args.allow_writes:
        print(f"tuiagent: {args.name} declares WRITES = True; running with the project read-only "
              "(pass --allow-writes to let it change project files)", file=sys.stderr)
    result = await catalog.call_tool(args.name, typed_args(record.spec.input_schema, call_args, from_cli),
                                     allow_network=args.allow_network, allow_writes=args.allow_writes)
    if result.ok:
        value = result.value if not isinstance(result.value, str) or result.value_is_repr else result.value
        text = value if isinstance(value, str) else json.dumps(value, indent=2, default=str)
    else:
        text = f"{args.name} failed ({result.error_kind}): {result.error}"
        if not (record.spec.writes and args.allow_writes) and "Read-only file system" in f"{result.error}{result.stderr}":
            text += ("\n(the project is read-only for this tool: a tool that changes project files declares WRITES = True"
                     + (" and runs with --allow-writes)" if not record.spec.writes else "; pass --allow-writes)"))
    if result.stdout:
        text = result.stdout.rstrip("\n") + "\n" + text
    return result.to_dict(), text, 0 if result.ok else 1


async def cmd_drift(catalog: Any, args: argparse.Namespace, _: JsonObject) -> Result:
    if args.name:
        need_tool(catalog, args.name)
    if args.accept:
        if not args.name:
            return {"error": "--accept needs a tool NAME", "stage": "usage"}, "--accept needs a tool NAME", 2
        change = await catalog.accept_drift(args.name)
        return change.to_dict(), f"accepted the drift of {args.name}: its dependency files as they are now are the " \
                                 f"reference{change.note}", 0
    reports = await catalog.drift(args.name)
    blocks = []
    for r in reports:
        state = r.broken or ("drifted" if r.drifted else "no drift")
        since = f"the review at {r.reviewed_at[:8]}" if r.reviewed_at else (r.since_commit or "unknown")[:8]
        tests = "tests FAIL" if r.tests_pass is False else (f"{len(r.tests)} tests pass" if r.tests else "no tests")
        head = f"{r.name}: {state}" + ("" if r.broken else f" since {since}") + f"; {tests}"
        if r.test_error and not r.tests_pass:
            head += f" ({r.test_error['message']})"
        lines = [head]
        if r.changed_files:
            lines.append("changed: " + ", ".join(escaped(name) for name in r.changed_files))
            lines.append(r.diff.rstrip("\n"))
        if r.added_files:
            verdict = "and the tests fail with them" if r.tests_pass is False else "no drift while the tests pass"
            lines.append("new files matching its dependencies: " + ", ".join(escaped(name) for name in r.added_files)
                         + f" ({verdict})")
        if r.note and not r.changed_files:
            lines.append(r.note)
        if r.drifted and not r.broken:
            lines.append(f"(reviewed it? `tuiagent tools drift {r.name} --accept` settles it)")
        blocks.append("\n".join(lines))
    return [r.to_dict() for r in reports], "\n\n".join(blocks) or "no tools", 0


COMMANDS: dict[str, Callable[[Any, argparse.Namespace, JsonObject], Awaitable[Result]]] = {
    "list": cmd_list, "show": cmd_show, "history": cmd_history, "diff": cmd_diff, "revert": cmd_revert,
    "prune": cmd_prune, "restore": cmd_restore, "run": cmd_run, "drift": cmd_drift,
    "commit": tools_commit.cmd_commit, "export": tools_skills.cmd_export, "import-skill": tools_skills.cmd_import_skill,
    "suggest": tools_tending.cmd_suggest, "doctor": tools_tending.cmd_doctor, "repair": tools_tending.cmd_repair,
}
