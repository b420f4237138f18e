"""`tuiagent config [--json | --markdown]`: the effective settings of `.agent/config.toml`, or the README's settings table."""

from __future__ import annotations

import argparse
import json

from tui_agent.commands.failures import Subparsers
from tui_agent.core.project import Project


def register(parser: argparse.ArgumentParser, subparsers: Subparsers) -> None:
    config = subparsers.add_parser("config", help="show the effective settings (validating .agent/config.toml)")
    shown = config.add_mutually_exclusive_group()
    shown.add_argument("--json", action="store_true", help="machine-readable output")
    shown.add_argument("--markdown", action="store_true", help="the table of every setting, as in the README")
    config.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from tui_agent.core.settings import SETTINGS, markdown_table, toml_literal  # the model loads with the command

    if args.markdown:
        print(markdown_table())
        return 0
    settings = Project.at(args.project).load_settings()
    values = settings.model_dump()
    if args.json:
        print(json.dumps({setting.key: values[setting.field_name] for setting in SETTINGS}, indent=2))
        return 0
    for setting in SETTINGS:
        value = values[setting.field_name]
        shown = "(not set)" if value is None else toml_literal(value)
        origin = "" if value != setting.default else "  (default)"
        print(f"{setting.key} = {shown}{origin}")
    return 0
