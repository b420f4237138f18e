"""The question before a project outside any git repository is opened: create one, go on without git, or quit."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from tui_agent.ui.typeahead import QuestionScreen

if TYPE_CHECKING:
    from tui_agent.ui.host import Ask

GitAnswer = Literal["create", "without", "quit"]


def state_folder() -> str:
    """Where a folder used without git keeps its sessions ($XDG_STATE_HOME/tuiagent), home shown as ~."""
    from tui_agent.core.project import outside_state_home

    folder, home = outside_state_home().parent, Path.home()
    return f"~/{folder.relative_to(home)}" if folder.is_relative_to(home) else str(folder)


def in_repository(folder: Path) -> bool:
    """Whether `folder` is inside a git work tree (git itself answers, as the core's root finding does)."""
    from tui_agent.core.rootfind import repository_top

    try:
        return repository_top(folder) is not None
    except ValueError:  # a repository git refuses: the runtime says why
        return True


async def outside_git_answer(ask: Ask, root: Path, init_git: bool) -> GitAnswer | None:
    """Outside any repository, with no `.agent/` yet: the person's answer, asked before anything is written (None: no
    question, a repository or `.agent/` is there, or --init-git; dismissed counts as quit)."""
    if init_git or await asyncio.to_thread(lambda: (root / ".agent").exists() or in_repository(root)):
        return None
    return await ask(GitQuestionScreen(root)) or "quit"


async def init_git_answer(ask: Ask, where: Path) -> bool:
    """The core's own question (a runtime opened with no repository): create one?"""
    from tui_agent.ui.screens.confirm import ConfirmScreen

    question = (f"[b]{escape(str(where))}[/b] is not a git repository.\nCreate one? Tools are versioned in git; without it the catalog "
                "still works but nothing is committed.")
    create = await ask(ConfirmScreen(question, yes="Create repository", no="Continue without"))
    return bool(create)


class GitQuestionScreen(QuestionScreen[GitAnswer]):
    """Asked before anything is written: y creates the repository, c goes on without git, n or Escape quits."""

    BINDINGS = [Binding("y", "answer('create')", "Create"), Binding("c", "answer('without')", "Without git"),
                Binding("n,escape", "answer('quit')", "Quit")]
    AUTO_FOCUS = "#quit"

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = folder

    @property
    def question(self) -> str:
        return (f"[b]{escape(str(self.folder))}[/b] is not a git repository and nothing has been written to it yet.\n"
                "y: create a repository (git init); tools are kept in .agent/ and versioned in git.\n"
                f"c: continue without git; nothing is written here (sessions are kept in {escape(state_folder())}), "
                "no tools, recipes or /undo.\n"
                "n: quit; nothing is created.")

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-dialog", classes="dialog"):
            yield Static(self.question, id="confirm-question")
            with Horizontal(classes="dialog-buttons"):
                yield Button("Create repo (y)", id="create", variant="primary")
                yield Button("Without git (c)", id="without")
                yield Button("Quit (n)", id="quit")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.action_answer(str(event.button.id))

    def action_answer(self, answer: str) -> None:
        if answer in ("create", "without", "quit"):
            self.dismiss(answer)  # type: ignore[arg-type]
