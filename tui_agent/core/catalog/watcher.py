"""Watches `.agent/tools/` with watchfiles and hands the names of changed tool files to the catalog."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path

import watchfiles

from tui_agent.core.catalog.files import tool_name_of

log = logging.getLogger(__name__)
PROBE_NAME = ".tuiagent-watch-probe"


class ToolWatcher:
    """Runs until cancelled; `ready` is set once the OS watch is live (proved by seeing a probe file's event)."""

    def __init__(self, tools_dir: Path, on_changes: Callable[[set[str]], Awaitable[None]], *,
                 debounce_ms: int = 200, step_ms: int = 15) -> None:
        self.tools_dir = tools_dir
        self.on_changes = on_changes
        self.debounce_ms = debounce_ms
        self.step_ms = step_ms
        self.ready = asyncio.Event()

    def names_in(self, changes: set[tuple[watchfiles.Change, str]]) -> set[str]:
        names: set[str] = set()
        for _change, raw in changes:
            path = Path(raw)
            if path.name == PROBE_NAME:
                self.ready.set()
                continue
            if path.parent != self.tools_dir:
                continue
            name = tool_name_of(path)
            if name is not None:
                names.add(name)
        return names

    async def _announce(self, probe: Path) -> None:
        while not self.ready.is_set():
            probe.write_text("probe\n")
            await asyncio.sleep(0.05)
        probe.unlink(missing_ok=True)

    async def run(self) -> None:
        self.tools_dir.mkdir(parents=True, exist_ok=True)
        probe = self.tools_dir / PROBE_NAME
        announcer = asyncio.create_task(self._announce(probe))
        try:
            async for changes in watchfiles.awatch(self.tools_dir, watch_filter=None, debounce=self.debounce_ms,
                                                   step=self.step_ms, recursive=False):
                names = self.names_in(changes)
                if not names:
                    continue
                try:
                    await self.on_changes(names)
                except asyncio.CancelledError:
                    raise
                except Exception:  # one bad event must not stop hot reload
                    log.exception("handling changes to %s failed", sorted(names))
        finally:
            announcer.cancel()
            probe.unlink(missing_ok=True)
