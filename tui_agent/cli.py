"""The `tuiagent` entry point: the TUI by default, `-p PROMPT` headless, and `tools`/`sandbox`/`recipes` subcommands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

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
    return int(handler(args) or 0)


if __name__ == "__main__":
    sys.exit(main())
