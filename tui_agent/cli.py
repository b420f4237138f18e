"""The `tuiagent` entry point: the TUI by default, `-p PROMPT` headless, and `tools`/`sandbox`/`recipes` subcommands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from tui_agent.commands import COMMAND_GROUPS


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="tuiagent", description=__doc__)
    parser.add_argument("--project", default=".", help="project folder (default: the current directory)")
    subparsers = parser.add_subparsers(dest="command")
    for group in COMMAND_GROUPS:
        group.register(parser, subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return 2
    problem = resolve_project(args)
    if problem is not None:
        print(f"tuiagent: {problem}", file=sys.stderr)
        return 2
    return int(handler(args) or 0)


def resolve_project(args: argparse.Namespace) -> str | None:
    """Point `args.project` at the project root (run from a subfolder too); why the command cannot run, or None."""
    from tui_agent.core.rootfind import ProjectRootError, locate, outside_repository_message

    try:
        located = locate(Path(args.project))
    except ProjectRootError as error:
        return str(error)
    for warning in located.warnings:
        print(f"tuiagent: warning: {warning}", file=sys.stderr)
    args.project = str(located.root)
    creates_agent_dir = getattr(args, "sandbox_command", None) != "status"
    asks_first = getattr(args, "command", None) is None and getattr(args, "prompt", None) is None  # the TUI asks
    if (not located.in_repository and not (located.root / ".agent").is_dir() and creates_agent_dir
            and not getattr(args, "init_git", False) and not asks_first):
        return outside_repository_message(located.root)
    return None


if __name__ == "__main__":
    sys.exit(main())
