"""How the UI opens the core runtime: `open_runtime` with the UI's approval and git-init callbacks."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol


class RuntimeOpener(Protocol):
    def __call__(
        self,
        root: Path,
        *,
        ask_init_git: Callable[..., Awaitable[bool]],
        approve: Callable[[Any], Awaitable[bool]],
        model: str | None,
    ) -> Awaitable[Any]: ...


async def open_runtime_for_ui(
    root: Path,
    *,
    ask_init_git: Callable[..., Awaitable[bool]],
    approve: Callable[[Any], Awaitable[bool]],
    model: str | None,
) -> Any:
    """The real runtime (project, settings, sandbox, catalog, recipes, agent) for `root`."""
    from tui_agent.core.runtime import open_runtime

    return await open_runtime(root, approve=approve, ask_init_git=ask_init_git, model=model)
