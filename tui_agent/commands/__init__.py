"""CLI subcommands, one module per command group, each exposing `register(parser, subparsers)`."""

from __future__ import annotations

from types import ModuleType

COMMAND_GROUPS: list[ModuleType] = []

from tui_agent.commands import tools  # noqa: E402  (tuiagent tools ...)
COMMAND_GROUPS.append(tools)
from tui_agent.commands import sandbox  # noqa: E402  (tuiagent sandbox ...)
COMMAND_GROUPS.append(sandbox)
from tui_agent.commands import run  # noqa: E402  (top-level options: -p headless, --continue, --resume; default: the TUI)
COMMAND_GROUPS.append(run)
from tui_agent.commands import recipes; COMMAND_GROUPS.append(recipes)  # noqa: E402,E702  (tuiagent recipes ..., tuiagent watch)
from tui_agent.commands import config; COMMAND_GROUPS.append(config)  # noqa: E402,E702  (tuiagent config)
from tui_agent.commands import mcp; COMMAND_GROUPS.append(mcp)  # noqa: E402,E702  (tuiagent mcp serve|list)
from tui_agent.commands import trust; COMMAND_GROUPS.append(trust)  # noqa: E402,E702  (tuiagent trust|untrust)
from tui_agent.commands import acp; COMMAND_GROUPS.append(acp)  # noqa: E402,E702  (tuiagent acp)
