"""`tuiagent recipes list|show|run|history|diff|revert|prune|restore` (each with `--json`) and `tuiagent watch`."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import stat
import sys
from collections.abc import AsyncIterator
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from tui_agent.core.textsafety import escaped
from tui_agent.commands.catalog_cli import Result, add_version_actions, error_result, name_refusal, need, print_result
from tui_agent.commands.failures import EXIT_USAGE, CommandFailure, Subparsers, report
from tui_agent.core.runtime_state import agent_of, catalog_of, recipes_of

if TYPE_CHECKING:
    from tui_agent.core.recipes.engine import RecipeEngine
    from tui_agent.core.runtime_state import NoModel, Ready, Runtime



def register(parser: argparse.ArgumentParser, subparsers: Subparsers) -> None:
    recipes = subparsers.add_parser("recipes", help="inspect, run and manage the project's recipes (.agent/recipes/*.toml)")
    actions = recipes.add_subparsers(dest="recipes_command", required=True)

    def action(name: str, help_text: str) -> argparse.ArgumentParser:
        sub = actions.add_parser(name, help=help_text)
        sub.add_argument("--json", action="store_true", help="machine-readable output")
        sub.set_defaults(handler=handle_recipes)
        return sub

    action("list", "every recipe with status, trigger, action, runs and description")
    action("show", "a recipe's status, problems and file").add_argument("name")
    run = action("run", "run a recipe now, whatever its trigger")
    run.add_argument("name")
    run.add_argument("--path", action="append", default=[], help="a changed file for {path}/{paths} (repeatable)")
    run.add_argument("--args", default="", help="the text for {args} (what follows /NAME)")
    run.add_argument("--tool", default="", help="the tool name for {name} (tool_authored recipes)")
    add_version_actions(action, "recipe")

    watch = subparsers.add_parser("watch", help="run file_changed recipes without the TUI until Ctrl-C (for CI or a spare terminal)")
    watch.add_argument("--json", action="store_true", help="one JSON object per line")
    watch.set_defaults(handler=handle_watch)


@contextlib.asynccontextmanager
async def opened(args: argparse.Namespace, *, submit_prompt: Any = None) -> AsyncIterator[tuple[NoModel | Ready, RecipeEngine]]:
    """The same runtime as the TUI and `-p` (top-level --yes/--allow/--init-git/--sandbox-tier apply), with its recipes."""
    from tui_agent.core.agent.permissions import flag_approver
    from tui_agent.core.runtime import open_runtime

    try:
        approve = flag_approver(yes=bool(getattr(args, "yes", False)), allowed_tools=getattr(args, "allow", []) or [])
    except ValueError as error:  # a malformed --allow rule
        raise CommandFailure(str(error), "usage", EXIT_USAGE) from None
    runtime = await open_runtime(
        args.project,
        approve=approve,
        model=getattr(args, "model", None),
        ask_init_git=lambda project: bool(getattr(args, "init_git", False)),
        sandbox_tier=getattr(args, "sandbox_tier", None),
        permission_mode=getattr(args, "permission_mode", None),
        allowed_tools=getattr(args, "allow", []) or [],
        denial_hint="(recipe run without a person: approve with tuiagent --yes, or an allow rule: --allow TOOL, --allow 'run_shell(make:*)')",
        submit_prompt=submit_prompt,
        watch=False,  # `recipes watch` runs the runtime's watcher itself (engine.watch()); the others need none
    )
    try:
        from tui_agent.core.runtime_state import Restricted, unavailable

        if isinstance(runtime, Restricted):
            raise CommandFailure(unavailable(runtime, "recipes"), "trust")
        engine = runtime.workshop.recipes
        if engine is None:
            raise CommandFailure(f"recipes are unavailable: {why_no_recipes(runtime)}", "runtime")
        yield runtime, engine
    finally:
        await runtime.aclose()


def why_no_recipes(runtime: Runtime) -> str:
    """The part that failed (the sandbox, the catalog or the recipes themselves), not every note of the start."""
    from tui_agent.core.runtime_state import NoModel, Ready

    failure = runtime.workshop.failure if isinstance(runtime, (NoModel, Ready)) else None
    return failure or runtime.core.sandbox_problem or "; ".join(runtime.core.problems) or "no catalog"


def agent_prompt_runner(holder: dict[str, NoModel | Ready], out: Any) -> Any:
    """A submit_prompt for the CLI: runs the turn headless, printing the assistant's text."""

    async def submit(text: str) -> None:
        runtime = holder.get("runtime")
        agent = agent_of(runtime) if runtime is not None else None
        if agent is None:
            reason = runtime.core.model_error if runtime is not None else "no runtime"
            raise RuntimeError(reason or "no model is configured")
        from tui_agent.core.events import TextDelta, TurnFailed

        async for event in agent.run_turn(text):
            if isinstance(event, TextDelta):
                out.write(event.text)
            elif isinstance(event, TurnFailed):
                raise RuntimeError(event.message)
        out.write("\n")
        out.flush()

    return submit


def handle_recipes(args: argparse.Namespace) -> int:
    refusal = name_refusal(args, "recipe")
    if refusal:
        return report(refusal, "usage", EXIT_USAGE, as_json=args.json)
    try:
        return asyncio.run(run_recipes_command(args))
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C, SIGTERM or SIGHUP: the run was cancelled
        print("interrupted", file=sys.stderr)
        return 130


async def run_recipes_command(args: argparse.Namespace) -> int:
    from tui_agent.commands.cancel_signals import cancel_current_task_on_signals
    from tui_agent.core.catalog.errors import PipelineError

    cancel_current_task_on_signals()
    holder: dict[str, NoModel | Ready] = {}
    async with opened(args, submit_prompt=agent_prompt_runner(holder, sys.stdout)) as (runtime, engine):
        holder["runtime"] = runtime
        for problem in runtime.core.problems:
            print(f"tuiagent: {problem}", file=sys.stderr)
        try:
            result = await COMMANDS[args.recipes_command](engine, args)
        except PipelineError as error:
            result = error_result(error)
        finally:
            for notice in later_notices(runtime):
                print(f"tuiagent: {escaped(notice)}", file=sys.stderr)
    return print_result(result, args.json)


def later_notices(runtime: Runtime) -> list[str]:
    """What could not be recorded during the command (read-only or full disk), not already said at start-up."""
    catalog, engine, sandbox = catalog_of(runtime), recipes_of(runtime), runtime.core.sandbox
    found = [*(catalog.state.notices if catalog is not None else []), *(sandbox.audit.notices if sandbox is not None else []),
             *(engine.runlog.notices if engine is not None else [])]
    return [notice for notice in dict.fromkeys(found) if notice not in runtime.core.problems]


def need_recipe(engine: Any, name: str) -> Any:
    return need(engine.get(name), "recipe", name)


def status_lines(record: Any) -> list[str]:
    lines = []
    if record.error is not None:
        where = f"line {record.error.line}: " if record.error.line else ""
        lines.append(f"    error [{record.error.stage}] {where}{record.error.message}")
    lines.extend(f"    {problem}" for problem in record.problems)
    return lines


async def cmd_list(engine: Any, args: argparse.Namespace) -> Result:
    records = engine.records()
    if not records:
        return [], "no recipes yet (.agent/recipes/<name>.toml)", 0
    rows = [f"{'NAME':<20} {'STATUS':<9} {'TRIGGER':<14} {'RUNS':>4} {'FAIL':>4}  {'LAST RUN':<19}  DESCRIPTION"]
    for record in records:
        trigger = record.recipe.trigger.on if record.recipe else "?"
        rows.append(f"{record.name:<20} {record.status:<9} {trigger:<14} {record.runs:>4} {record.failures:>4}  "
                    f"{record.last_run or '-':<19}  {escaped(record.description)}")
        rows.extend(status_lines(record))
    return [record.to_dict() for record in records], "\n".join(rows), 0


async def cmd_show(engine: Any, args: argparse.Namespace) -> Result:
    record = need_recipe(engine, args.name)
    path = engine.project.recipe_path(args.name)
    source = path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
    data = {**record.to_dict(), "path": engine.project.relative(path) if path.exists() else None, "source": source}
    lines = [f"{record.name}: {record.status} — {escaped(record.description)}"]
    lines.extend(status_lines(record))
    if record.recipe is not None:
        recipe = record.recipe
        trigger = recipe.trigger.on + (f" {list(recipe.trigger.paths)} debounce {recipe.trigger.debounce_ms} ms"
                                       if recipe.trigger.on == "file_changed" else "")
        lines += [f"trigger: {trigger}", f"action: {recipe.action.describe()}", f"priority: {recipe.priority}",
                  f"requires: {', '.join(recipe.needed_tools) or '-'}", f"commit: {record.commit or '-'}",
                  f"runs: {record.runs} ({record.failures} failed), last {record.last_run or 'never'}"]
    if source is not None:
        lines += ["", source.rstrip("\n")]
    return data, "\n".join(lines), 0


async def cmd_run(engine: Any, args: argparse.Namespace) -> Result:
    need_recipe(engine, args.name)
    runs = await engine.run_recipe(args.name, paths=args.path, args=args.args, tool=args.tool)
    if not runs:
        return [], f"recipe {args.name} did not run: its action uses {{path}} and no --path was given", 1
    lines = [f"{'ok' if run.ok else 'FAILED'}: recipe {run.recipe} ({run.action}) {run.summary} [{run.duration_ms:.0f} ms]"
             for run in runs]
    failed = any(not run.ok for run in runs)
    return [asdict(run) for run in runs], "\n".join(lines), 1 if failed else 0


async def cmd_history(engine: Any, args: argparse.Namespace) -> Result:
    entries = engine.history(args.name)
    if not entries:
        return [], f"recipe {args.name} has no history in git", 1
    lines = [f"{entry.short}  {entry.date[:19]}  {escaped(entry.author):<12} {escaped(entry.message)}" for entry in entries]
    return [asdict(entry) for entry in entries], "\n".join(lines), 0


async def cmd_diff(engine: Any, args: argparse.Namespace) -> Result:
    text = engine.store.diff(args.name, args.rev)
    return {"name": args.name, "rev": args.rev, "diff": text}, text or "(no difference)", 0


def change_result(verb: str, name: str, change: Any) -> Result:
    note = f" ({change.message})" if change.deferred_reason else ""
    commit = f" in {change.commit[:10]}" if change.commit else ""
    return change.to_dict(), f"{verb} recipe {name}{commit}{note}", 0


async def cmd_revert(engine: Any, args: argparse.Namespace) -> Result:
    return change_result("reverted", args.name, await engine.revert(args.name, args.rev))


async def cmd_prune(engine: Any, args: argparse.Namespace) -> Result:
    return change_result("pruned", args.name, await engine.prune(args.name))


async def cmd_restore(engine: Any, args: argparse.Namespace) -> Result:
    return change_result("restored", args.name, await engine.restore(args.name))


COMMANDS = {"list": cmd_list, "show": cmd_show, "run": cmd_run, "history": cmd_history, "diff": cmd_diff,
            "revert": cmd_revert, "prune": cmd_prune, "restore": cmd_restore}


def handle_watch(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(run_watch(args))
    except KeyboardInterrupt:  # a second Ctrl-C during shutdown
        return 130


def stop_when_reader_leaves(loop: asyncio.AbstractEventLoop, stop: asyncio.Event) -> None:
    """`tuiagent watch | head -1`: stop once the pipe's reader is gone, not at the next line written into it."""
    try:
        descriptor = sys.stdout.fileno()
        is_pipe = stat.S_ISFIFO(os.fstat(descriptor).st_mode)
    except (OSError, ValueError):  # no real stdout (closed, or replaced by an object without a descriptor)
        return
    if is_pipe:  # a pipe's write end turns "readable" (an error) only when its last reader closed it
        loop.add_reader(descriptor, stop.set)


def event_line(event: Any, as_json: bool) -> str | None:
    from tui_agent.core.events import CatalogChanged, Notice

    if as_json:
        return json.dumps({"event": type(event).__name__, **asdict(event)}, ensure_ascii=False, default=str)
    if isinstance(event, Notice):
        return f"[{event.level}] {event.message}"
    if isinstance(event, CatalogChanged):
        return f"[info] recipes changed: {', '.join(event.names)} ({event.reason})"
    return None


async def run_watch(args: argparse.Namespace) -> int:
    """Watch the project and run file_changed recipes until SIGINT/SIGTERM; prints one line per result."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(signum, stop.set)
    stop_when_reader_leaves(loop, stop)

    def emit(event: Any) -> None:
        line = event_line(event, args.json)
        if line is not None:
            print(line, flush=True)

    holder: dict[str, NoModel | Ready] = {}
    async with opened(args, submit_prompt=agent_prompt_runner(holder, sys.stdout)) as (runtime, engine):
        holder["runtime"] = runtime
        engine.add_listener(emit)
        for problem in runtime.core.problems:
            emit_notice(args.json, problem, "warning")
        watcher = asyncio.create_task(engine.watch())
        ready = asyncio.create_task(engine.watcher.ready.wait())
        await asyncio.wait({watcher, ready, asyncio.create_task(stop.wait())}, return_when=asyncio.FIRST_COMPLETED)
        if ready.done():
            names = [recipe.name for recipe in engine.book.runnable("file_changed")]
            broken = [record.name for record in engine.records() if record.status == "broken"]
            emit_notice(args.json, f"watching {runtime.core.project.root}: {len(names)} file_changed recipe(s)"
                        + (f" ({', '.join(names)})" if names else "") + (f"; broken: {', '.join(broken)}" if broken else "")
                        + "; Ctrl-C stops", "info")
        if not watcher.done():
            await asyncio.wait({watcher, asyncio.create_task(stop.wait())}, return_when=asyncio.FIRST_COMPLETED)
        code = 0
        if watcher.done() and not watcher.cancelled() and watcher.exception() is not None:
            emit_notice(args.json, f"the watcher stopped: {watcher.exception()}", "error")
            code = 1
        watcher.cancel()
        ready.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
        with contextlib.suppress(asyncio.CancelledError):
            await engine.idle()
    emit_notice(args.json, "stopped", "info")
    return code


def emit_notice(as_json: bool, message: str, level: str) -> None:
    from tui_agent.core.events import Notice

    print(event_line(Notice(message, level), as_json), flush=True)  # type: ignore[arg-type]
