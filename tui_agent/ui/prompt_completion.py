"""The app's side of prompt completion: which commands and project files the prompt's menu offers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from tui_agent.ui.completion import Candidate, file_candidates, project_files, slash_candidates
from tui_agent.ui.command_registry import CommandRegistry

if TYPE_CHECKING:
    from tui_agent.ui.host import UIHost

FILES_TTL_S = 15.0


class PromptCompletion:
    """`candidates(token)` for the prompt box; the file list is read in a thread and kept for FILES_TTL_S."""

    def __init__(self, host: UIHost, commands: CommandRegistry, *, files_loaded: Callable[[], None]) -> None:
        self.host = host
        self.commands = commands
        self.files_loaded = files_loaded
        """Offers the completions again (the prompt box's menu opened before the list was read)."""
        self._project_files: list[str] = []
        self._project_files_at = 0.0

    def candidates(self, token: str) -> list[Candidate]:
        if token.startswith("/"):
            return slash_candidates(token, self.commands.descriptions())
        if time.monotonic() - self._project_files_at > FILES_TTL_S:
            self._project_files_at = time.monotonic()
            self.host.run_worker(self._load_project_files(), group="project-files", exclusive=True)
        return file_candidates(token, self._project_files)

    async def _load_project_files(self) -> None:
        self._project_files = await asyncio.to_thread(project_files, self.host.project_root)
        self.files_loaded()
