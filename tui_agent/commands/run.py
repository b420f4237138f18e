"""Top-level options (-p, --continue, --resume, --model, --yes, --allow, Claude Code's headless flags, ...) and the
default handler: headless or the TUI."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.core.textsafety import escaped
from tui_agent.commands import claude_flags
from tui_agent.commands.claude_flags import STDIN_PROMPT
from tui_agent.commands.failures import EXIT_USAGE, Subparsers, report
from tui_agent.core.headless.output import OUTPUT_FORMATS, HeadlessPrinter, failed_result
from tui_agent.core.headless.claude_names import MODES
from tui_agent.core.runtime_state import agent_of, mcp_of

if TYPE_CHECKING:
    from tui_agent.core.headless.session import Approvals, Session
    from tui_agent.core.headless.control import ControlChannel
    from tui_agent.core.headless.hooks import SdkHooks
    from tui_agent.core.mcp.config import ServerConfig
    from tui_agent.core.mcp.hub import McpHub
    from tui_agent.core.runtime import Runtime

HEADLESS_DENIAL_HINT = "(headless run: approve with --yes, or an allow rule that covers this call: --allow {rule})"


def register(parser: argparse.ArgumentParser, subparsers: Subparsers) -> None:
    parser.add_argument("-p", "--print", dest="prompt", metavar="PROMPT", nargs="?", const=STDIN_PROMPT,
                        help="run PROMPT headless to the end and print the result (no PROMPT: read it from stdin)")
    parser.add_argument("--continue", dest="continue_latest", action="store_true", help="resume the latest session")
    parser.add_argument("--resume", metavar="ID", help="resume the session ID (.agent/sessions/ID.jsonl)")
    parser.add_argument("--model", help="model id (default: `model` in .agent/config.toml, else a current Sonnet)")
    parser.add_argument("--yes", action="store_true", help="approve every shell command, write and network call")
    parser.add_argument("--allow", action="append", default=[], metavar="RULE", help="approve what RULE covers: TOOL, 'run_shell(make test)' (exact) or 'run_shell(pytest:*)' (prefix); repeatable")
    parser.add_argument("--permission-mode", choices=tuple(MODES), metavar="MODE",
                        help="default (ask), acceptEdits (edits accepted), plan (read-only until a plan is approved), bypassPermissions (approve "
                             "all), dontAsk (deny what no rule allows); tuiagent's ask, auto and read-only too")
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
    claude_flags.register(parser)
    parser.set_defaults(handler=handle)


def _thinking_value(value: str) -> str:
    from tui_agent.core.agent.thinking import ThinkingConfig, ThinkingSettingError

    try:
        ThinkingConfig.parse(value)
    except ThinkingSettingError as error:
        raise argparse.ArgumentTypeError(str(error).replace("thinking = ", "")) from None
    return value


def handle(args: argparse.Namespace) -> int:
    if getattr(args, "undo", False):
        from tui_agent.commands.undo import run_undo

        return asyncio.run(run_undo(args))
    if args.prompt is None:
        from tui_agent.ui.launch import run_tui  # imported here so that the headless path never imports textual

        return int(run_tui(args) or 0)
    try:
        return asyncio.run(run_headless(args))
    except (KeyboardInterrupt, asyncio.CancelledError):  # Ctrl-C, SIGTERM or SIGHUP: the turn was cancelled
        print("interrupted", file=sys.stderr)
        return 130


async def run_headless(args: argparse.Namespace) -> int:
    from tui_agent.commands.cancel_signals import cancel_current_task_on_signals
    from tui_agent.core.headless.session import Approvals
    from tui_agent.core.agent.sessions import SessionNotFound
    from tui_agent.core.mcp.config import parse_mcp_config
    from tui_agent.core.project import ConfigError

    as_json = args.output_format != "text"
    cancel_current_task_on_signals()

    def fail(message: str, stage: str) -> int:
        """One failure before any turn: in stream-json, a `result` line as Claude Code's parsers require it."""
        details = failed_result(message) if args.output_format == "stream-json" else {}
        return report(message, stage, EXIT_USAGE, as_json=as_json, **details)

    try:
        options = claude_flags.translate(args)
        given = [parse_mcp_config(value) for value in args.mcp_config]
    except (ValueError, OSError) as error:  # McpConfigError is a ValueError
        return fail(str(error), "usage")
    printer = HeadlessPrinter(args.output_format, sys.stdout, sys.stderr)
    printer.warnings.extend(options.warnings)
    printer.partial = options.partial_messages
    channel, hooks = _control_channel(printer) if args.input_format == "stream-json" else (None, None)
    try:
        approvals = Approvals(printer, channel, yes=args.yes, allow=options.allow_rules, options=options, hooks=hooks)
    except ValueError as error:  # RuleError: an --allow / --allowedTools rule that does not parse
        return fail(str(error), "usage")
    try:
        runtime = await _open(args, approvals, options, watch=channel is not None)
    except ConfigError:
        raise
    except (SessionNotFound, ValueError) as error:
        return fail(str(error), "session" if isinstance(error, SessionNotFound) else "start")
    extra: McpHub | None = None
    try:
        for problem in [*runtime.core.problems, *options.warnings]:
            print(f"[warning] {escaped(problem)}", file=sys.stderr)  # names and paths in it: the project's
        printer.warnings.extend(runtime.core.problems)
        if agent_of(runtime) is None:
            return fail(str(runtime.core.model_error), "model")
        extra = await _given_servers(runtime, given, printer)
        session = _session(runtime, printer, approvals, options, extra)
        if hooks is not None and hooks.events:
            session.run_hooks(hooks)
        if channel is not None:
            channel.handlers.update(session.handlers())
            return await _stream_turns(session, channel, runtime)
        prompt = args.prompt if args.prompt != STDIN_PROMPT else await asyncio.to_thread(sys.stdin.read)
        return await _one_turn(session, prompt, runtime)
    finally:
        if extra is not None:
            await extra.aclose()
        await runtime.aclose()


def _control_channel(printer: HeadlessPrinter) -> tuple[ControlChannel, SdkHooks]:
    """--input-format stream-json: the control protocol on stdin, started (prompts, `initialize` and the SDK's
    requests), and the SDK's hooks it carries."""
    from tui_agent.core.headless.session import initialize_handler
    from tui_agent.core.headless.control import ControlChannel
    from tui_agent.core.headless.hooks import SdkHooks

    channel = ControlChannel(printer.emit)
    hooks = SdkHooks(channel.request)
    channel.handlers["initialize"] = initialize_handler(printer.warnings, hooks)
    channel.start(sys.stdin)
    return channel, hooks


async def _open(args: argparse.Namespace, approvals: Approvals, options: claude_flags.ClaudeOptions, *,
                watch: bool) -> Runtime:
    """The project as the flags ask; `watch` only for a stream of prompts (a one-shot prompt needs no project
    watcher, nor its probe before each request). The sandbox's warm workers are not pre-started:
    the first sandboxed call starts what it needs, and a reply that calls no tool never pays for them."""
    from tui_agent.core.runtime import open_runtime

    return await open_runtime(
        args.project, approve=approvals, model=args.model, ask_init_git=(lambda project: bool(args.init_git)),
        sandbox_tier=args.sandbox_tier, resume=args.resume, continue_latest=args.continue_latest,
        permission_mode=options.mode, allowed_tools=options.allow_rules, denial_hint=HEADLESS_DENIAL_HINT,
        watch=watch, trust_project=bool(getattr(args, "trust_project", False)), thinking=args.thinking, effort=args.effort,
        prestart_sandbox=False, early_glance=True)


def _session(runtime: Runtime, printer: HeadlessPrinter, approvals: Approvals, options: claude_flags.ClaudeOptions,
             extra: McpHub | None) -> Session:

    from tui_agent.core.headless.session import Session
    from tui_agent.core.headless.shaping import shape

    from tui_agent.core.agent.model import ModelClient

    agent = agent_of(runtime)
    assert agent is not None
    # the API's message ids, usage and raw events for the json printers (text prints none of them, and turning each
    # event into a dict builds the SDK's serializers first: ~0.1 s of CPU)
    if isinstance(agent.client, ModelClient) and printer.format != "text":
        agent.client.stream_listener = printer.stream_event
    if extra is not None and extra.connections:
        from tui_agent.core.mcp.agent_tools import McpToolProvider

        agent.tool_providers.append(McpToolProvider(extra))
    shape(agent, system_prompt=options.system_prompt, append=options.append_system_prompt, hidden=options.hidden)
    if options.max_turns is not None:
        agent.settings = agent.settings.model_copy(update={"max_turns": options.max_turns})
    if any(hub is not None and hub.connections for hub in (mcp_of(runtime), extra)):  # (imports the MCP types)
        from tui_agent.core.mcp.sampling import offer_sampling

        offer_sampling(agent, mcp_of(runtime), extra)
    return Session(agent, printer, approvals, (mcp_of(runtime), extra))


async def _given_servers(runtime: Runtime, given: list[tuple[list[ServerConfig], list[str]]],
                         printer: HeadlessPrinter) -> McpHub | None:
    """The servers of --mcp-config, started for this run (a name the project configures too is skipped)."""
    if not given:
        return None
    from tui_agent.core.mcp.hub import McpHub

    hub = mcp_of(runtime)
    taken = set(hub.connections) if hub is not None else set()
    configs: list[ServerConfig] = []
    problems: list[str] = []
    for found, trouble in given:
        problems += trouble
        for config in found:
            if config.name in taken:
                problems.append(f"--mcp-config: server {config.name!r} is configured by the project already; skipped")
            else:
                taken.add(config.name)
                configs.append(config)
    hub = await McpHub.start_given(runtime.core.project, configs, problems)
    for line in hub.failures():
        print(f"[warning] {escaped(line)}", file=sys.stderr)
        printer.warnings.append(line)
    return hub


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("tuiagent")
    except metadata.PackageNotFoundError:
        return "0"


async def _one_turn(session: Session, prompt: str, runtime: Runtime) -> int:
    undo = runtime.core.undo

    async def edited() -> list[str] | None:  # the files between the turn's own undo checkpoints (no git work tree: None)
        return await asyncio.to_thread(undo.last_turn_paths) if undo is not None else None

    session.edited = edited
    return await session.run(_expanded(prompt, runtime), _version())


def _expanded(prompt: str, runtime: Runtime) -> str:
    """`/name args` naming a Markdown command file (the project's only when it is trusted): the prompt it sends."""
    from tui_agent.core.agent.md_commands import expand_slash
    from tui_agent.core.runtime_parts import TrustedState

    return expand_slash(prompt, runtime.core.project.root if isinstance(runtime, TrustedState) else None, Path.home())


async def _stream_turns(session: Session, channel: ControlChannel, runtime: Runtime) -> int:
    """Each user message on stdin is a turn (its own init, messages and result lines) until stdin closes."""
    code = 0
    while True:
        prompt = await channel.prompts.get()
        if prompt is None:
            return code
        code = await _one_turn(session, prompt, runtime)
