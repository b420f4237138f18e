"""Recipes: declarative, hot-reloaded automation rules in `.agent/recipes/*.toml` (trigger → tool call or agent prompt)."""

from tui_agent.core.recipes.api import open_recipes
from tui_agent.core.recipes.engine import RecipeEngine
from tui_agent.core.recipes.formathelp import FORMAT_HELP
from tui_agent.core.recipes.loopguard import LoopGuard
from tui_agent.core.recipes.model import Action, Recipe, RecipeRecord, RecipeRun, Trigger
from tui_agent.core.recipes.recipefile import parse_recipe

__all__ = ["FORMAT_HELP", "Action", "LoopGuard", "Recipe", "RecipeEngine", "RecipeRecord", "RecipeRun", "Trigger", "open_recipes", "parse_recipe"]
