"""The runtime's states as types: opening, restricted (untrusted), trusted without a model, trusted with one.

`open_runtime` returns one of `Restricted | NoModel | Ready` (the `Runtime` alias): each is a required `Core`
(project, settings, permissions, sandbox or its problem, undo, session, problems) plus what that state has, and
nothing else: `Restricted` has read-only previews and no catalog, recipes or MCP servers; `NoModel` and `Ready` have
the trusted `Workshop`; only `Ready` has (and must have) an agent. Front ends read it through `agent_of`,
`catalog_of`, `recipes_of`, `mcp_of`, … or match on the type, so a restricted project is a case the code has to
handle; the core's parts are read as `state.core.<part>`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, TypeAlias

from tui_agent.core.runtime_parts import Core, OpenState, TrustedState, Workshop, usage_from_session

if TYPE_CHECKING:
    from tui_agent.core.agent.loop import Agent
    from tui_agent.core.catalog.api import Catalog
    from tui_agent.core.mcp.hub import McpHub
    from tui_agent.core.recipes.engine import RecipeEngine
    from tui_agent.core.sandbox import Sandbox
    from tui_agent.core.tending.suggestions import SuggestionBook
    from tui_agent.core.versioning.store_interface import VersionedStore

__all__ = ["Core", "NoModel", "Opening", "Ready", "Restricted", "Runtime", "RuntimeState", "Workshop", "agent_of",
           "catalog_of", "mcp_of", "recipes_of", "runtime_of", "sandbox_of", "suggestions_of", "unavailable",
           "usage_from_session"]


@dataclass(frozen=True)
class Opening:
    """The project is still opening (or failed to: `error`); nothing of it is usable yet."""

    error: str | None = None


@dataclass
class Restricted(OpenState):
    """Untrusted: files, git history, diffs and the conversation work; committed grants, recipes, tools and MCP
    servers do not (there are none here). `previews` list the tool and recipe files read-only; `agent` (None
    without a model) has only the built-in tools, every call asked."""

    core: Core
    previews: dict[str, VersionedStore]
    agent: Agent | None = None

    def _stores(self) -> dict[str, VersionedStore]:
        return self.previews

    def start_watching(self) -> None:
        return None  # nothing of an untrusted project is watched: no store reloads, no recipe fires

    async def _close_parts(self) -> None:
        return None  # previews hold nothing open

    def _agent(self) -> Agent | None:
        return self.agent


@dataclass
class NoModel(TrustedState):
    """Trusted, no model configured: the catalog, recipes, diffs and manual tool runs work; `reason` says how to
    configure a model."""

    core: Core
    workshop: Workshop
    reason: str


@dataclass
class Ready(TrustedState):
    """Trusted with a model: everything works."""

    core: Core
    workshop: Workshop
    agent: Agent

    def _agent(self) -> Agent | None:
        return self.agent


Runtime: TypeAlias = "Restricted | NoModel | Ready"
"""An open project, in the state it opened in."""
RuntimeState: TypeAlias = "Opening | Restricted | NoModel | Ready"


def agent_of(state: RuntimeState) -> Agent | None:
    """The agent a prompt goes to, in any state (None while opening or without a model)."""
    return state.agent if isinstance(state, (Restricted, Ready)) else None


def runtime_of(state: RuntimeState) -> Runtime | None:
    return None if isinstance(state, Opening) else state


def catalog_of(state: RuntimeState) -> Catalog | None:
    """The live tool catalog: only a trusted project has one (None too when it failed to open)."""
    return state.workshop.catalog if isinstance(state, (NoModel, Ready)) else None


def recipes_of(state: RuntimeState) -> RecipeEngine | None:
    """The recipe engine: only a trusted project's recipes are loaded."""
    return state.workshop.recipes if isinstance(state, (NoModel, Ready)) else None


def suggestions_of(state: RuntimeState) -> SuggestionBook | None:
    return state.workshop.suggestions if isinstance(state, (NoModel, Ready)) else None


def mcp_of(state: RuntimeState) -> McpHub | None:
    """The session's MCP servers: only a trusted project starts them."""
    return state.workshop.mcp if isinstance(state, (NoModel, Ready)) else None


def sandbox_of(state: RuntimeState) -> Sandbox | None:
    return None if isinstance(state, Opening) else state.core.sandbox


def unavailable(state: RuntimeState, what: str) -> str:
    """Why `what` cannot be used in this state, and how to get it."""
    if isinstance(state, Restricted):
        return (f"{what} is not available: the project is restricted (not trusted). Run `tuiagent trust` (in the "
                "TUI: /trust) to see what it grants and trust it")
    if isinstance(state, Opening):
        return f"{what} is not available: {state.error}" if state.error else f"{what} is not available yet: the project is still opening"
    return f"{what} is not available (see the problems shown when the project opened)"
