"""CLI subcommands, one module per command group, each exposing `register(parser, subparsers)`."""

from __future__ import annotations

from types import ModuleType

COMMAND_GROUPS: list[ModuleType] = []
