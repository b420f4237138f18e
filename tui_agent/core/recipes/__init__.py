"""Recipes: declarative, hot-reloaded automation rules in `.agent/recipes/*.toml` (trigger → tool call or agent prompt).

The names below load from their modules on first use: importing one submodule (the agent's tools import
`formathelp` for the `create_recipe` description) does not import the engine, the catalog and git with it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.core.lazyexports import lazy_exports

if TYPE_CHECKING:
    from tui_agent.core.recipes.api import open_recipes
    from tui_agent.core.recipes.engine import RecipeEngine
    from tui_agent.core.recipes.formathelp import FORMAT_HELP
    from tui_agent.core.recipes.loopguard import LoopGuard
    from tui_agent.core.recipes.model import Action, Recipe, RecipeRecord, RecipeRun, Trigger
    from tui_agent.core.recipes.recipefile import parse_recipe

__all__ = ["FORMAT_HELP", "Action", "LoopGuard", "Recipe", "RecipeEngine", "RecipeRecord", "RecipeRun", "Trigger", "open_recipes", "parse_recipe"]

_MODULE_OF = {"open_recipes": "api", "RecipeEngine": "engine", "FORMAT_HELP": "formathelp", "LoopGuard": "loopguard",
              "Action": "model", "Recipe": "model", "RecipeRecord": "model", "RecipeRun": "model", "Trigger": "model",
              "parse_recipe": "recipefile"}


__getattr__ = lazy_exports(__name__, _MODULE_OF)
