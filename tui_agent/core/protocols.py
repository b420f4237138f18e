"""The seams between the agent loop and its parts, as typing Protocols: the model today, more as they are typed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, Protocol

from tui_agent.core.events import Event

if TYPE_CHECKING:
    from tui_agent.core.agent.model import ModelReply


class Model(Protocol):
    """What the agent needs of a model: one streamed reply per request, then its ModelReply (or a ModelError)."""

    model: str
    base_url: str
    max_tokens: int

    def stream_reply(
        self, *, system: list[dict[str, Any]], tools: list[dict[str, Any]], messages: list[dict[str, Any]]
    ) -> AsyncIterator[Event | ModelReply]: ...

    async def aclose(self) -> None: ...
