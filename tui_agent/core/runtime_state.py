"""The runtime's states as types: opening, restricted (untrusted), trusted without a model, trusted with one.

A front end asks `runtime.state` (or holds `Opening` while the project opens) and matches on the type, so a
restricted project is a case the code has to handle, not a flag it can forget."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tui_agent.core.agent.loop import Agent
    from tui_agent.core.catalog.api import Catalog
    from tui_agent.core.recipes.engine import RecipeEngine
    from tui_agent.core.sandbox import Sandbox
    from tui_agent.core.tending.suggestions import SuggestionBook
    from tui_agent.core.runtime import Runtime
    from tui_agent.core.trust.check import TrustStatus


@dataclass(frozen=True)
class Opening:
    """The project is still opening (or failed to: `error`); nothing of it is usable yet."""

    error: str | None = None


@dataclass(frozen=True)
class Restricted:
    """Untrusted: files, git history, diffs and the conversation work; committed grants, recipes, tools and MCP
    servers do not. `agent` (None without a model) has only the built-in tools, every call asked."""

    runtime: Runtime
    trust: TrustStatus
    agent: Agent | None


@dataclass(frozen=True)
class NoModel:
    """Trusted, no model configured: the catalog, recipes, diffs and manual tool runs work; `reason` says how to
    configure a model."""

    runtime: Runtime
    reason: str


@dataclass(frozen=True)
class Ready:
    """Trusted with a model: everything works."""

    runtime: Runtime
    agent: Agent


RuntimeState = Opening | Restricted | NoModel | Ready
Open = Restricted | NoModel | Ready


def agent_of(state: RuntimeState) -> Agent | None:
    """The agent a prompt goes to, in any state (None while opening or without a model)."""
    return state.agent if isinstance(state, (Restricted, Ready)) else None


def runtime_of(state: RuntimeState) -> Runtime | None:
    return None if isinstance(state, Opening) else state.runtime


def catalog_of(state: RuntimeState) -> Catalog | None:
    """The live tool catalog: only a trusted project has one (None too when it failed to open)."""
    return state.runtime.catalog if isinstance(state, (NoModel, Ready)) else None


def recipes_of(state: RuntimeState) -> RecipeEngine | None:
    """The recipe engine: only a trusted project's recipes are loaded."""
    return state.runtime.recipes if isinstance(state, (NoModel, Ready)) else None


def suggestions_of(state: RuntimeState) -> SuggestionBook | None:
    return state.runtime.suggestions if isinstance(state, (NoModel, Ready)) else None


def sandbox_of(state: RuntimeState) -> Sandbox | None:
    runtime = runtime_of(state)
    return runtime.sandbox if runtime is not None else None


def unavailable(state: RuntimeState, what: str) -> str:
    """Why `what` cannot be used in this state, and how to get it."""
    if isinstance(state, Restricted):
        return (f"{what} is not available: the project is restricted (not trusted). Run `tuiagent trust` and "
                "start tuiagent again, or choose Trust on the trust screen")
    if isinstance(state, Opening):
        return f"{what} is not available: {state.error}" if state.error else f"{what} is not available yet: the project is still opening"
    return f"{what} is not available (see the problems shown when the project opened)"
