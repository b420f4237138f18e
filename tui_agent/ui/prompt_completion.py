"""The app's side of prompt completion: which commands and project files the prompt's menu offers."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

from textual import work

from tui_agent.ui.completion import Candidate, file_candidates, project_files, slash_candidates
from tui_agent.ui.slash import BUILTIN_COMMANDS

if TYPE_CHECKING:
    from tui_agent.ui.app import TuiAgentApp

FILES_TTL_S = 15.0


class PromptCompletionMixin:
    """`prompt_candidates(token)` for the prompt box; the file list is read in a thread and kept for FILES_TTL_S."""

    def init_prompt_completion(self: "TuiAgentApp") -> None:
        self._project_files: list[str] = []
        self._project_files_at = 0.0

    def command_descriptions(self: "TuiAgentApp") -> dict[str, str]:
        commands = dict(BUILTIN_COMMANDS)
        commands["restore"] = "bring back a pruned tool (/restore NAME; alone: list them)"
        commands.update({name: f"{description} (recipe)" for name, description in self.recipe_commands().items()})
        return commands

    def prompt_candidates(self: "TuiAgentApp", token: str) -> list[Candidate]:
        if token.startswith("/"):
            return slash_candidates(token, self.command_descriptions())
        if time.monotonic() - self._project_files_at > FILES_TTL_S:
            self.load_project_files()
        return file_candidates(token, self._project_files)

    @work(group="project-files", exclusive=True)
    async def load_project_files(self: "TuiAgentApp") -> None:
        self._project_files_at = time.monotonic()
        self._project_files = await asyncio.to_thread(project_files, self.project_root)
        self.prompt_area.update_completions()  # the menu opened before the list was read
