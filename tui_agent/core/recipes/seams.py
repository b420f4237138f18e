"""What the recipe engine needs of the rest of the runtime: the catalog, the permission check, the agent's prompt."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from tui_agent.core.content import JsonObject

if TYPE_CHECKING:
    from tui_agent.core.agent.permissions import ApprovalRequest, Decision
    from tui_agent.core.catalog.models import ToolRecord
    from tui_agent.core.events import CatalogChanged
    from tui_agent.core.sandbox import RunResult
    from tui_agent.core.versioning.gitstore import CatalogGit

SubmitPrompt = Callable[[str], Awaitable[Any]]
"""Hands the agent a user turn; should return when the turn is over (loop protection covers the whole turn)."""


class ToolRunner(Protocol):
    """What the engine needs from the catalog (core.catalog.Catalog): its tools, their git, its changes."""

    @property
    def git(self) -> CatalogGit:
        """The repository recipes are committed to (the catalog's)."""
        ...

    def get(self, name: str) -> ToolRecord | None: ...
    async def call_tool(self, name: str, args: JsonObject, *, allow_writes: bool = False) -> RunResult: ...
    def add_listener(self, callback: Callable[[CatalogChanged], None]) -> None: ...


class WriteApprover(Protocol):
    """The runtime's permission check (`Permissions`): the mode, `--allow TOOL`, then the approval callback."""

    async def check(self, request: ApprovalRequest) -> Decision: ...
