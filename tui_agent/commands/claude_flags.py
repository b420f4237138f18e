"""Claude Code's headless flags (what the Claude Agent SDK passes its CLI), translated into tuiagent's options."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core.headless.claude_names import MODES, our_tool, split_tool_list, translate_rule

STDIN_PROMPT = "\0stdin"
"""`-p` without a prompt (or `--input-format stream-json`): the prompt comes from stdin."""

IGNORED_WITH_VALUE = ("--setting-sources", "--settings", "--add-dir", "--session-id", "--max-budget-usd",
                      "--fallback-model", "--betas", "--max-thinking-tokens", "--thinking-display",
                      "--tools", "--task-budget", "--json-schema", "--plugin-dir", "--resume-session-at")
IGNORED_SWITCHES = ("--include-hook-events", "--fork-session", "--strict-mcp-config",
                    "--session-mirror", "--dangerously-skip-permissions")
"""Accepted so a Claude Code caller starts, and named in a warning: tuiagent does not act on them (yet)."""


class _StreamInput(argparse.Action):
    """`--input-format stream-json` makes the run headless even without -p (the Agent SDK never passes -p)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        setattr(namespace, self.dest, values)
        if values == "stream-json" and getattr(namespace, "prompt", None) is None:
            namespace.prompt = STDIN_PROMPT


class _Ignored(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        namespace.ignored_flags = [*getattr(namespace, "ignored_flags", []), option_string or "?"]


def register(parser: argparse.ArgumentParser) -> None:
    # --allow, --allowedTools and --allowed-tools share a prefix: abbreviations would make a subcommand's own `--all`
    # (`tuiagent mcp trust --all`) ambiguous at the top level, so only whole option names are taken there.
    parser.allow_abbrev = False
    parser.add_argument("--input-format", choices=("text", "stream-json"), default="text", action=_StreamInput,
                        help="stream-json: user messages and control requests on stdin, as Claude Code reads them")
    parser.add_argument("--verbose", action="store_true", help="accepted for Claude Code compatibility (stream-json is always complete)")
    parser.add_argument("--max-turns", type=int, metavar="N", help="at most N model requests for the prompt")
    parser.add_argument("--system-prompt", metavar="TEXT", help="replace tuiagent's instructions (the catalog index stays); empty: keep them")
    parser.add_argument("--system-prompt-file", metavar="FILE", help="--system-prompt read from FILE")
    parser.add_argument("--append-system-prompt", metavar="TEXT", default="", help="add TEXT to the end of the system prompt")
    for flag in ("--allowedTools", "--allowed-tools"):
        parser.add_argument(flag, dest="allowed_tools", action="append", default=[], metavar="RULES",
                            help="Claude Code allow rules (Bash(git log:*), Read, Edit, mcp__server__tool ...); "
                                 "mapped to tuiagent's tools, see README" if flag == "--allowedTools" else argparse.SUPPRESS)
    for flag in ("--disallowedTools", "--disallowed-tools"):
        parser.add_argument(flag, dest="disallowed_tools", action="append", default=[], metavar="TOOLS",
                            help="tools the model is not offered (Claude Code or tuiagent names)" if flag == "--disallowedTools" else argparse.SUPPRESS)
    parser.add_argument("--mcp-config", action="append", default=[], metavar="JSON_OR_FILE",
                        help='more MCP servers for this run: {"mcpServers": {name: {command, args, env}}}')
    parser.add_argument("--include-partial-messages", action="store_true",
                        help="stream-json: also print each raw API stream event as a `stream_event` line")
    parser.add_argument("--permission-prompt-tool", metavar="stdio",
                        help="stdio: ask the stream-json caller (can_use_tool control requests) instead of denying")
    parser.set_defaults(ignored_flags=[])
    for flag in IGNORED_WITH_VALUE:
        parser.add_argument(flag, action=_Ignored, help=argparse.SUPPRESS)
    for flag in IGNORED_SWITCHES:
        parser.add_argument(flag, action=_Ignored, nargs=0, help=argparse.SUPPRESS)


@dataclass(frozen=True)
class ClaudeOptions:
    """The translated flags."""

    mode: str | None = None
    bypass: bool = False
    ask_caller: bool = False
    allow_rules: list[str] = field(default_factory=list)
    hidden: frozenset[str] = frozenset()
    system_prompt: str | None = None
    append_system_prompt: str = ""
    max_turns: int | None = None
    partial_messages: bool = False
    warnings: list[str] = field(default_factory=list)


def translate(args: argparse.Namespace) -> ClaudeOptions:
    """Raises ValueError (a usage error) for values tuiagent cannot honour."""
    mode = args.permission_mode
    if mode is not None and mode not in MODES:
        raise ValueError(f"--permission-mode must be one of {', '.join(MODES)}, not {mode!r}")
    if args.permission_prompt_tool not in (None, "stdio"):
        raise ValueError("--permission-prompt-tool: only `stdio` (control requests on stream-json) is supported")
    if args.permission_prompt_tool == "stdio" and args.input_format != "stream-json":
        raise ValueError("--permission-prompt-tool stdio needs --input-format stream-json")
    if args.max_turns is not None and args.max_turns < 1:
        raise ValueError("--max-turns must be at least 1")
    system_prompt = args.system_prompt
    if args.system_prompt_file:
        system_prompt = Path(args.system_prompt_file).read_text(encoding="utf-8")
    warnings = [f"{flag} is accepted for Claude Code compatibility and ignored" for flag in dict.fromkeys(args.ignored_flags)]
    if args.include_partial_messages and args.output_format != "stream-json":
        warnings.append("--include-partial-messages only applies to --output-format stream-json; ignored")
    rules = [translate_rule(rule) for rule in split_tool_list(args.allowed_tools)]
    disallowed = split_tool_list(args.disallowed_tools)
    warnings += [f"--disallowedTools {name}: a pattern disallows nothing (tuiagent has no deny rules; name the whole "
                 "tool)" for name in disallowed if "(" in name]
    return ClaudeOptions(
        mode=MODES[mode] if mode else None, bypass=mode == "bypassPermissions",
        ask_caller=args.permission_prompt_tool == "stdio" and mode != "dontAsk",
        allow_rules=[*args.allow, *rules],
        hidden=frozenset(our_tool(name) for name in disallowed if "(" not in name),
        system_prompt=system_prompt or None, append_system_prompt=args.append_system_prompt or "",
        max_turns=args.max_turns, partial_messages=args.include_partial_messages and args.output_format == "stream-json",
        warnings=warnings)
