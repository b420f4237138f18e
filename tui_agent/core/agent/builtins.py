"""The set of built-in tools available in a session (create_recipe only when recipes are wired)."""

from __future__ import annotations

from tui_agent.core.agent.catalog_tools import CATALOG_TOOLS, CREATE_RECIPE
from tui_agent.core.agent.exec_tools import EXEC_TOOLS
from tui_agent.core.agent.file_tools import FILE_TOOLS
from tui_agent.core.agent.plan_tools import PLAN_TOOLS
from tui_agent.core.agent.toolbase import BuiltinTool
from tui_agent.core.agent.web_tools import WEB_FETCH

CATALOG_BUILTINS = frozenset({"create_tool", "prune_tool", "search_tools", "call_tool"})
SANDBOX_BUILTINS = frozenset({"run_shell", "run_python"})


def builtin_tools(*, has_sandbox: bool, has_catalog: bool, has_recipes: bool) -> dict[str, BuiltinTool]:
    """Built-ins by name, in a stable order; those whose backing part is missing are left out, not stubbed."""
    tools: dict[str, BuiltinTool] = {}
    for tool in (*FILE_TOOLS, *EXEC_TOOLS, WEB_FETCH, *PLAN_TOOLS, *CATALOG_TOOLS):
        if tool.name in SANDBOX_BUILTINS and not has_sandbox:
            continue
        if tool.name in CATALOG_BUILTINS and not has_catalog:
            continue
        tools[tool.name] = tool
    if has_recipes:
        tools[CREATE_RECIPE.name] = CREATE_RECIPE
    return tools
