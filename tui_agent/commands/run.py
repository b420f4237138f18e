"""Top-level options (-p, --continue, --resume, --model, --yes, --allow, ...) and the default handler: headless or the TUI."""

from __future__ import annotations

import argparse
import os
import asyncio
import dataclasses
import sys

from tui_agent.commands.failures import EXIT_USAGE, Subparsers, report
from tui_agent.core.agent.headless import OUTPUT_FORMATS, HeadlessPrinter, RunInfo
from tui_agent.core.agent.permissions import PERMISSION_MODES, flag_approver

HEADLESS_DENIAL_HINT = "(headless run: approve with --yes, or an allow rule: --allow TOOL, --allow 'run_shell(pytest:*)')"


def register(parser: argparse.ArgumentParser, subparsers: Subparsers) -> None:
    parser.add_argument("-p", "--print", dest="prompt", metavar="PROMPT", help="run PROMPT headless to the end and print the result")
    parser.add_argument("--continue", dest="continue_latest", action="store_true", help="resume the latest session")
    parser.add_argument("--resume", metavar="ID", help="resume the session ID (.agent/sessions/ID.jsonl)")
    parser.add_argument("--model", help="model id (default: `model` in .agent/config.toml, else a current Sonnet)")
    parser.add_argument("--yes", action="store_true", help="approve every shell command, write and network call")
    parser.add_argument("--allow", action="append", default=[], metavar="RULE", help="approve what RULE covers: TOOL, 'run_shell(make test)' (exact) or 'run_shell(pytest:*)' (prefix); repeatable")
    parser.add_argument("--permission-mode", choices=PERMISSION_MODES, help="ask (default), auto (edits accepted) or read-only")
    parser.add_argument("--output-format", choices=OUTPUT_FORMATS, default="text", help="headless output: text, json or stream-json")
    parser.add_argument("--init-git", action="store_true", help="create a git repository if the project has none")
    parser.add_argument("--undo", action="store_true",
                        help="undo the last agent turn of the latest session (its file changes and catalog changes)")
    parser.add_argument("--sandbox-tier", choices=("bubblewrap", "rlimits"), help="force a sandbox tier")
    parser.add_argument("--trust-project", action="store_true",
                        help="trust this project for this run only (an untrusted one runs restricted; `tuiagent trust` records it)")
    parser.add_argument("--thinking", type=_thinking_value, metavar="adaptive|off|TOKENS",
                        help="extended thinking (default: `thinking` in [agent], else adaptive where the model has it)")
    parser.add_argument("--effort", choices=("low", "medium", "high", "xhigh", "max"), help="the model's effort level")
    parser.set_defaults(handler=handle)


def _thinking_value(value: str) -> str:
    from tui_agent.core.agent.thinking import ThinkingConfig, ThinkingSettingError

    try:
        ThinkingConfig.parse(value)
    except ThinkingSettingError as error:
        raise argparse.ArgumentTypeError(str(error).replace("thinking = ", "")) from None
    return value


def handle(args: argparse.Namespace) -> int:
    from tui_agent.core.agent.thinking import EFFORT_ENV, THINKING_ENV  # read by the agent, in the TUI and headless

    for variable, value in ((THINKING_ENV, getattr(args, "thinking", None)), (EFFORT_ENV, getattr(args, "effort", None))):
        if value:
            os.environ[variable] = value
    if getattr(args, "undo", False):
        from tui_agent.commands.undo import run_undo

        return asyncio.run(run_undo(args))
    if args.prompt is None:
        from tui_agent.ui.app import run_tui  # imported here so that the headless path never imports textual

        return int(run_tui(args) or 0)
    try:
        return asyncio.run(run_headless(args))
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C, SIGTERM or SIGHUP: the turn was cancelled
        print("interrupted", file=sys.stderr)
        return 130


async def run_headless(args: argparse.Namespace) -> int:
    from tui_agent.commands.cancel_signals import cancel_current_task_on_signals
    from tui_agent.core.agent.sessions import SessionNotFound
    from tui_agent.core.project import ConfigError
    from tui_agent.core.runtime import open_runtime
    from tui_agent.core.runtime_state import Restricted, agent_of
    from tui_agent.core.versioning.worktree_diff import TurnEdits, changed_paths

    cancel_current_task_on_signals()
    try:
        printer = HeadlessPrinter(args.output_format, sys.stdout, sys.stderr)
        runtime = await open_runtime(
            args.project,
            approve=flag_approver(yes=args.yes, allowed_tools=args.allow),
            model=args.model,
            ask_init_git=(lambda project: bool(args.init_git)),
            sandbox_tier=args.sandbox_tier,
            resume=args.resume,
            continue_latest=args.continue_latest,
            permission_mode=args.permission_mode,
            allowed_tools=args.allow,
            denial_hint=HEADLESS_DENIAL_HINT,
            trust_project=bool(getattr(args, "trust_project", False)),
        )
    except ConfigError:
        raise
    except (SessionNotFound, ValueError) as error:
        stage = "session" if isinstance(error, SessionNotFound) else "start"
        return report(str(error), stage, EXIT_USAGE, as_json=args.output_format != "text")
    try:
        for problem in runtime.problems:
            print(f"[warning] {problem}", file=sys.stderr)
        state = runtime.state
        if isinstance(state, Restricted):  # in the JSON result too: a caller must not mistake it for a full run
            printer.warnings.extend(problem for problem in runtime.problems if problem.startswith("restricted mode:"))
        agent = agent_of(state)
        if agent is None:
            return report(str(runtime.model_error), "model", EXIT_USAGE, as_json=args.output_format != "text")
        before = dataclasses.replace(agent.usage)
        _system, tools = agent.build_request()
        printer.start(RunInfo(agent.session_id, agent.model, str(agent.project.root), [tool["name"] for tool in tools],
                              agent.permissions.mode), agent.messages)
        edits = TurnEdits(runtime.project.root)
        await edits.start()
        async for event in agent.run_turn(args.prompt):
            printer.handle(event)
        diff = await edits.diff()
        return printer.finish(session_id=agent.session_id, model=agent.model, run_usage=agent.usage.since(before),
                              session_usage=agent.usage, edited_files=changed_paths(diff) if diff is not None else None)
    finally:
        await runtime.aclose()

