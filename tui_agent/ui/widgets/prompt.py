"""The multi-line prompt: Enter sends, Ctrl+J / Shift+Enter add a line, Up/Down at the edges walk the history; a long
paste shows as one token that edits as one unit and Ctrl+O expands (widgets/paste_area.py)."""

from __future__ import annotations

import time

from collections.abc import Callable
from dataclasses import dataclass

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Input, Tabs, TextArea

from tui_agent.ui.completion import Candidate, current_token
from tui_agent.ui.widgets.paste_area import PasteTokenArea
from tui_agent.ui.typed import typed_text
from tui_agent.ui.widgets.completion_menu import CompletionMenu

CompletionSource = Callable[[str], list[Candidate]]


SCROLL_KEYS: dict[str, Callable[[Widget], None]] = {
    "pageup": Widget.action_page_up, "pagedown": Widget.action_page_down,
    "shift+pageup": Widget.action_scroll_home, "shift+pagedown": Widget.action_scroll_end,
}


class PromptHistory:
    """Earlier prompts, newest last, with a cursor and the unsent draft kept aside while browsing."""

    def __init__(self, entries: list[str] | None = None, limit: int = 500) -> None:
        self.entries: list[str] = list(entries or [])[-limit:]
        self.limit = limit
        self.position: int | None = None
        self.draft = ""

    def add(self, text: str) -> None:
        if text.strip() and (not self.entries or self.entries[-1] != text):
            self.entries.append(text)
            del self.entries[: -self.limit]
        self.position = None

    def previous(self, current: str) -> str | None:
        if not self.entries:
            return None
        if self.position is None:
            self.draft = current
            self.position = len(self.entries)
        if self.position == 0:
            return None
        self.position -= 1
        return self.entries[self.position]

    def next(self) -> str | None:
        if self.position is None:
            return None
        self.position += 1
        if self.position >= len(self.entries):
            self.position = None
            return self.draft
        return self.entries[self.position]


class PromptArea(PasteTokenArea):
    """The prompt box; posts `PromptArea.Submitted` with the text when Enter is pressed."""

    BINDINGS = [
        Binding("ctrl+j", "newline", "New line", show=False),
        Binding("ctrl+r", "search_history", "Search history", show=False),
    ]

    @dataclass
    class Submitted(Message):
        """The person sent a prompt (or a slash command)."""

        prompt_area: "PromptArea"
        text: str

        @property
        def control(self) -> "PromptArea":
            return self.prompt_area

    def __init__(self, *, prompt_history: PromptHistory | None = None, id: str | None = None, placeholder: str = "",
                 completions: CompletionSource | None = None) -> None:
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, tab_behavior="focus", compact=True, placeholder=placeholder)
        self.prompt_history = prompt_history or PromptHistory()
        self.completions = completions
        self._typing = False
        self.last_typed: float | None = None
        """When a character was last typed here (a question popping up meanwhile lets the typing go on: ui/typeahead.py)."""

    def action_search_history(self) -> None:
        """Ctrl+R: pick an earlier prompt by searching; a draft it replaces stays one ↑ away in the history."""
        from tui_agent.ui.screens.history_search import HistorySearchScreen

        def put(chosen: str | None) -> None:
            if chosen is not None:
                self.prompt_history.add(self.full_text)
                self.set_text(chosen)
            self.take_focus()

        self.app.push_screen(HistorySearchScreen(list(self.prompt_history.entries)), put)

    def set_text(self, text: str) -> None:
        """Replace the text, the cursor at its end."""
        self.load_text(text)
        self.move_cursor(self.document.end)

    def take_focus(self) -> None:
        """Focus the prompt box now (not after the pending messages, as `focus()` does)."""
        self.screen.set_focus(self)

    @property
    def menu(self) -> CompletionMenu | None:
        parent = self.parent
        if parent is None:
            return None
        menus = parent.query(CompletionMenu)
        return menus.first() if menus else None

    def _on_text_area_changed(self, event: TextArea.Changed) -> None:
        """Typing opens or narrows the menu; other changes (history, a sent prompt) close it."""
        self.refresh_bindings()
        if self._typing:
            self._typing = False
            self.update_completions()
        elif self.menu is not None:
            self.menu.close()

    def update_completions(self) -> None:
        """Offer completions for the word at the cursor: `/command` at the start, `@file` anywhere."""
        menu = self.menu
        if menu is None or self.completions is None:
            return
        row, column = self.cursor_location
        line = self.document.get_line(row)
        start, token = current_token(line, column)
        is_command = row == 0 and start == 0 and token.startswith("/") and not token.startswith("//")
        if not (is_command or token.startswith("@")):
            menu.close()
            return
        menu.show(self.completions(token))

    def accept_completion(self, *, trailing_space: bool = True) -> bool:
        menu = self.menu
        choice = menu.chosen() if menu is not None and menu.is_open else None
        if menu is None or choice is None:
            return False
        row, column = self.cursor_location
        start, _token = current_token(self.document.get_line(row), column)
        self.replace(choice.insert if trailing_space else choice.insert.rstrip(), (row, start), (row, column))
        menu.close()
        return True

    def _menu_key(self, key: str) -> bool:
        """Keys the open completion menu takes; True when one was used."""
        menu = self.menu
        if menu is None or not menu.is_open:
            return False
        if key in ("enter", "tab"):
            # keys typed in one burst arrive before the text's Changed messages: narrow the menu to what is typed now,
            # or "/clear" typed fast would run the "/c" menu's first choice
            self.update_completions()
            if not menu.is_open:
                return False
        if key in ("down", "up"):
            menu.move(1 if key == "down" else -1)
            return True
        if key == "tab":
            return self.accept_completion()
        if key == "enter":  # a command runs at once (as in Claude Code); a file name is only completed
            choice = menu.chosen()
            command = choice is not None and choice.insert.startswith("/")
            accepted = self.accept_completion(trailing_space=not command)
            if accepted and command:
                self.submit()
            return accepted
        if key == "escape":
            menu.close()
            return True
        return False

    def action_newline(self) -> None:
        self.insert("\n")

    async def _on_key(self, event: events.Key) -> None:
        typed = typed_text(event)
        if typed is not None:
            self.last_typed = time.monotonic()
        if self._menu_key(event.key):
            event.stop()
            event.prevent_default()
            return
        self._typing = typed is not None or event.key in ("backspace", "delete")
        if typed is not None and not event.is_printable and not self.read_only:  # a joiner, a mark: TextArea drops them
            event.stop()
            event.prevent_default()
            self._replace_via_keyboard(typed, *self.selection)
            return
        if event.key in SCROLL_KEYS:  # the prompt is one line or a few: these keys scroll the conversation above it
            event.stop()
            event.prevent_default()
            self.scroll_conversation(SCROLL_KEYS[event.key])
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.submit()
            return
        if event.key == "tab":  # completes a /command or @file at the cursor; otherwise on to the next pane's list
            event.stop()
            event.prevent_default()
            self.update_completions()
            if self.menu is None or not self.menu.is_open:
                self.focus_next_pane()
            return
        if event.key in ("shift+enter", "alt+enter"):
            event.stop()
            event.prevent_default()
            self.insert("\n")
            return
        if event.key == "up" and self.cursor_location[0] == 0:
            recalled = self.prompt_history.previous(self.text)
            if recalled is not None:
                event.stop()
                event.prevent_default()
                self._show(recalled)
                return
        if event.key == "down" and self.cursor_location[0] == self.document.line_count - 1 and self.prompt_history.position is not None:
            recalled = self.prompt_history.next()
            if recalled is not None:
                event.stop()
                event.prevent_default()
                self._show(recalled)
                return
        if not event.is_printable and await self._run_own_binding(event.key):
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    async def _run_own_binding(self, key: str) -> bool:
        """Run this box's binding for `key` (Backspace, ctrl+w, ←) now, as the app would once the key bubbled up to it:
        else an Enter right behind it, which this box handles itself, would send the prompt first."""
        for binding in self._bindings.key_to_bindings.get(key, ()):
            if not binding.priority and await self.app.run_action(binding.action, self):
                return True
        return False

    def focus_next_pane(self) -> None:
        """Focus the queued prompts when there are any, else the next pane's focusable widget: not a text box (a filter has
        its own key, `/`), not the tab bar (F2-F4)."""
        chain = self.screen.focus_chain
        if self not in chain:
            return
        queued = [widget for widget in chain if widget.id == "prompt-queue"]  # prompts waiting for the turn: first
        if queued:
            self.screen.set_focus(queued[0])
            return
        index = chain.index(self)
        for widget in chain[index + 1 :] + chain[:index]:
            if not isinstance(widget, (Input, TextArea, Tabs)):
                self.screen.set_focus(widget)
                return

    def scroll_conversation(self, scroll: Callable[[Widget], None]) -> None:
        """Run a scroll action (`Widget.action_page_up`, …) on the conversation next to this prompt."""
        parent = self.parent
        if parent is None:
            return
        for target in parent.query("Conversation"):
            scroll(target)

    def _show(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)

    def submit(self) -> None:
        text = self.full_text
        if not text.strip():
            return
        self.prompt_history.add(text)
        self.load_text("")
        self.post_message(self.Submitted(self, text))
