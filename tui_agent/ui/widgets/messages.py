"""The widgets that show one conversation entry each (text, tool call, notice); the entry itself is widgets/entry.py."""

from __future__ import annotations

import json
import re
import time
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.content import Content
from textual.widget import Widget
from textual.widgets import Collapsible, Static
from textual.widgets.collapsible import CollapsibleTitle

from tui_agent.ui.diffs import highlighted_source
from tui_agent.ui.live_output import live_text
from tui_agent.ui.widgets.entry import Entry as Entry, EntryKind as EntryKind
from tui_agent.ui.widgets.reply import AssistantText as AssistantText, FencedReply as FencedReply, reply_widget, reply_widget_type
from tui_agent.core.content import JsonObject

RESULT_PREVIEW_CHARS = 4000
PASTE_FOLD_CHARS = 1000
"""A prompt longer than this (a paste, usually) shows folded to its first PASTE_FOLD_LINES lines until unfolded (enter
on it, or a click)."""
PASTE_FOLD_LINES = 3
SOURCE_ARGUMENT_NAMES = ("source", "code")
TITLE_CHROME = 4
"""A folded call's title line around its label: the title's padding (1 each side) and "▶ "."""


def argument_preview(arguments: JsonObject, limit: int = 60) -> str:
    """`name='x', n=3` shortened to `limit` characters, leaving source code out."""
    parts = []
    for key, value in arguments.items():
        shown = f"<{len(value.splitlines())} lines>" if key in SOURCE_ARGUMENT_NAMES and isinstance(value, str) else repr(value)
        parts.append(f"{key}={shown}")
    preview = ", ".join(parts)
    return preview if len(preview) <= limit else preview[: limit - 1] + "…"


UNKNOWN_TOOL = re.compile(r"^(there is )?no (callable catalog )?tool named ")


def format_duration(ms: float | None) -> str:
    """'850 ms', '2.4 s', '3m 05s'."""
    ms = ms or 0.0
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f} s"
    return f"{int(ms // 60_000)}m {int(ms % 60_000 // 1000):02d}s"


def tool_outcome(entry: Entry) -> str:
    """'waiting for your approval', 'running…' ('running · 4.0 s' after a second), 'ok · 12 ms', 'error · 3.1 s', 'cancelled · 2.4 s', 'unknown tool'."""
    if entry.result is None and entry.awaiting_approval:
        return "waiting for your approval"
    if entry.result is None:
        elapsed_ms = (time.monotonic() - entry.started) * 1000
        return "running…" if elapsed_ms < 1000 else f"running · {format_duration(elapsed_ms)} (esc stops it)"
    took = f" · {format_duration(entry.duration_ms)}" if entry.duration_ms is not None else ""  # unknown after /resume
    if entry.cancelled:
        return f"cancelled{took}"
    if entry.is_error and UNKNOWN_TOOL.match(entry.result):
        return "unknown tool"
    return f"{'error' if entry.is_error else 'ok'}{took}"


TESTS_PASSED = re.compile(r"tests: (\d+/\d+ passed|none)")


def authoring_summary(entry: Entry) -> str:
    """For a finished create_tool call: ' · 14 lines · tests 1/1 passed'."""
    if entry.tool != "create_tool" or entry.result is None or entry.is_error:
        return ""
    source = entry.source or entry.arguments.get("source")
    lines = f" · {len(source.splitlines())} lines" if isinstance(source, str) else ""
    tests = TESTS_PASSED.search(entry.result)
    return lines + (f" · tests {tests.group(1)}" if tests else "")


ARGUMENTS_SHOWN = 60
ARGUMENTS_MIN = 12


def tool_title(entry: Entry, width: int | None = None) -> str:
    """The folded line of a tool call: name, arguments, and its outcome; given the `width` it has, the arguments are
    shortened first, so the outcome (a running call's timer, ok or error) stays on screen in a narrow pane."""
    outcome = tool_outcome(entry)
    authored = " · authored" if entry.authored and outcome != "unknown tool" else ""
    summary = authoring_summary(entry)
    if summary:  # the one line that matters first, so a narrow pane still shows it
        return f"create_tool {entry.arguments.get('name', '?')}{summary}  {outcome}{authored}"
    tail = f"  {outcome}{authored}"
    limit = ARGUMENTS_SHOWN if width is None else max(ARGUMENTS_MIN, min(ARGUMENTS_SHOWN, width - len(entry.tool) - 2 - len(tail)))
    return f"{entry.tool}({argument_preview(entry.arguments, limit)}){tail}"


def user_text(entry: Entry, expanded: bool = False) -> Text:
    """The prompt as typed (a long paste folded to its first lines unless `expanded`); struck through and marked once
    its turn was undone."""
    text = entry.text if expanded or len(entry.text) <= PASTE_FOLD_CHARS else folded_paste(entry.text)
    if not entry.undone:
        shown = Text(text)
    else:
        shown = Text(text, style="strike dim")
    if text != entry.text:
        lines = entry.text.count("\n") + 1
        shown.append(f"\n… pasted text: {len(entry.text):,} characters, {lines:,} lines (enter/click: expand)", style="dim italic")
    elif len(entry.text) > PASTE_FOLD_CHARS:
        shown.append("\n(enter/click: fold)", style="dim italic")
    if entry.undone:
        shown.append("\n↶ undone: this turn's changes were taken back", style="italic")
    return shown


def folded_paste(text: str) -> str:
    """The first lines of a long prompt, each cut to a screen's width."""
    lines = text.splitlines()[:PASTE_FOLD_LINES]
    return "\n".join(line if len(line) <= 200 else line[:200] + "…" for line in lines)


class UserMessage(Static):
    """What the person typed; a long paste shows folded to its first lines; enter on it (it takes the focus, as a tool
    call's title does: tab reaches it) or a click unfolds it, and folds it again."""

    BINDINGS = [Binding("enter", "toggle_fold", "Expand/fold", show=False)]

    def __init__(self, entry: Entry) -> None:
        super().__init__(user_text(entry), classes="message user")
        self.entry = entry
        self.expanded = False
        self.can_focus = self.foldable

    @property
    def foldable(self) -> bool:
        return len(self.entry.text) > PASTE_FOLD_CHARS

    def rebind(self, entry: Entry) -> None:
        """Show another entry of the same kind (the conversation recycles widgets as its window slides)."""
        self.entry = entry
        self.expanded = False
        self.can_focus = self.foldable
        self.update(user_text(entry))

    def action_toggle_fold(self) -> None:
        if self.foldable:
            self.expanded = not self.expanded
            self.update(user_text(self.entry, self.expanded))

    def on_click(self) -> None:
        self.action_toggle_fold()


class NoticeMessage(Static):
    """A runtime notice (retry, deferred commit, configuration hint, error)."""

    def __init__(self, entry: Entry) -> None:
        super().__init__(Text(entry.text), classes=f"message notice -{entry.level}")
        self.entry = entry

    def rebind(self, entry: Entry) -> None:
        self.remove_class("-info", "-warning", "-error")  # (the same entry may come back with its level changed)
        self.entry = entry
        self.add_class(f"-{entry.level}")
        self.update(Text(entry.text))


def __getattr__(name: str) -> Any:
    """`AssistantMessage` (the streaming widget) lives in streaming.py: importing Markdown costs startup time."""
    if name == "AssistantMessage":
        from tui_agent.ui.widgets.streaming import AssistantMessage

        return AssistantMessage
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class ToolCallBlock(Collapsible):
    """A foldable tool call: arguments, result, duration, and for `create_tool` the new tool's source."""

    def __init__(self, entry: Entry) -> None:
        self.entry = entry
        self.result_expanded = False
        """A long result shows in full (clicked), not cut at RESULT_PREVIEW_CHARS."""
        self._arguments_view = Static(self._arguments_renderable(), classes="tool-arguments")
        self._result_view = Static(self._result_renderable(), classes="tool-result")
        self._live_view = Static("", classes="tool-live")
        super().__init__(
            self._arguments_view,
            self._result_view,
            title=tool_title(entry),
            collapsed=True,
            classes="message tool",
        )
        self._refresh_classes()
        self._ticking = False
        self.show_live()

    def on_click(self, event: events.Click) -> None:
        """A click on a long result shows all of it, in place (another folds it back)."""
        if event.widget is self._result_view and len(self.entry.result or "") > RESULT_PREVIEW_CHARS:
            event.stop()
            self.result_expanded = not self.result_expanded
            self._result_view.update(self._result_renderable())
            self._watch_title(self.title)

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield self._live_view  # outside the folded contents: a running command's output shows folded too

    def on_mount(self) -> None:
        self._tick_while_running()

    def show_live(self) -> None:
        """While the call runs, the newest lines it printed; nothing once its result is in."""
        running = self.entry.result is None and bool(self.entry.live)
        self._live_view.display = running
        if running:
            self._live_view.update(live_text(self.entry.live))

    def _tick_while_running(self) -> None:
        """While the call runs, its title counts the seconds (a long shell command is visibly alive)."""
        if self.entry.result is not None or self._ticking:
            return
        self._ticking = True

        def tick() -> None:
            if self.entry.result is not None:
                ticker.stop()
                self._ticking = False
            self.retitle()

        ticker = self.set_interval(1.0, tick)

    def label_width(self) -> int | None:
        """The columns the title's label has (the title's padding and ▶ taken off); None before the first layout."""
        width = self.content_region.width - TITLE_CHROME
        return width if width > 0 else None

    def retitle(self) -> None:
        self.title = tool_title(self.entry, self.label_width())

    def on_resize(self) -> None:
        self.retitle()

    @property
    def result_cut(self) -> bool:
        """The result shows cut at RESULT_PREVIEW_CHARS (enter on the title or a click on the result shows it all)."""
        return len(self.entry.result or "") > RESULT_PREVIEW_CHARS and not self.result_expanded

    def _on_collapsible_title_toggle(self, event: CollapsibleTitle.Toggle) -> None:
        """enter (or a click) on the title: unfold, then show a cut result whole, then fold (Collapsible's own handler,
        which runs after this one unless prevented, unfolds and folds)."""
        if self.collapsed or not self.result_cut:
            return
        event.stop()
        event.prevent_default()
        self.result_expanded = True
        self._result_view.update(self._result_renderable())
        self._watch_title(self.title)

    def _watch_title(self, title: str) -> None:
        """The title literally (arguments may hold `[`), with how to fold or unfold when that fits too."""
        verb = "unfold" if self.collapsed else "show all" if self.result_cut else "fold"
        width = self.label_width()
        hints = (f"  (enter/click: {verb})", f"  (enter: {verb})", "")
        hint = next((hint for hint in hints if width is None or len(title) + len(hint) <= width), "")
        self._title.label = Content.assemble(Content(title), (hint, "dim italic"))

    def _watch_collapsed(self, collapsed: bool) -> None:
        super()._watch_collapsed(collapsed)
        self._watch_title(self.title)

    def _arguments_renderable(self) -> RenderableType:
        arguments = {key: value for key, value in self.entry.arguments.items() if key not in SOURCE_ARGUMENT_NAMES}
        parts: list[RenderableType] = [Text("arguments", style="bold dim")]
        parts.append(highlighted_source(json.dumps(arguments, indent=2, ensure_ascii=False, default=str), "json", line_numbers=False))
        source = self.entry.source or next((value for key, value in self.entry.arguments.items() if key in SOURCE_ARGUMENT_NAMES and isinstance(value, str)), None)
        if source is not None:
            parts.append(Text("source", style="bold dim"))
            parts.append(highlighted_source(source, "python"))
        return Group(*parts)

    def _result_renderable(self) -> RenderableType:
        if self.entry.result is None:
            return Text("running…", style="italic dim")
        result = self.entry.result
        if len(result) > RESULT_PREVIEW_CHARS and not self.result_expanded:
            result = (result[:RESULT_PREVIEW_CHARS] + f"\n… ({len(self.entry.result) - RESULT_PREVIEW_CHARS} more characters: "
                      "click here, or enter on the title, to show them)")
        label = Text("error" if self.entry.is_error else "result", style="bold red" if self.entry.is_error else "bold dim")
        return Group(label, Text(result))

    def _refresh_classes(self) -> None:
        self.set_class(self.entry.result is None, "-running")
        self.set_class(self.entry.is_error, "-error")
        self.set_class(self.entry.authored, "-authored")

    def rebind(self, entry: Entry) -> None:
        """Show another tool call (the conversation recycles widgets as its window slides)."""
        self.entry = entry
        self.collapsed = True
        self.result_expanded = False
        self.refresh_entry()
        self._tick_while_running()

    def refresh_entry(self) -> None:
        """Show the entry's current state (after the call finished or the tool got authored)."""
        self.retitle()
        self._refresh_classes()
        self._arguments_view.update(self._arguments_renderable())
        self._result_view.update(self._result_renderable())
        self.show_live()


class ThinkingBlock(Collapsible):
    """The model's extended thinking, folded under a one-line title (unfold to read it)."""

    def __init__(self, entry: Entry) -> None:
        self.entry = entry
        self._body = Static(Text(entry.text, style="italic dim"), classes="thinking-text")
        super().__init__(self._body, title=thinking_title(entry), collapsed=True, classes="message thinking")

    def rebind(self, entry: Entry) -> None:
        self.entry = entry
        self.title = thinking_title(entry)
        self._body.update(Text(entry.text, style="italic dim"))


def thinking_title(entry: Entry) -> str:
    return f"thinking · {len(entry.text.split())} words  (enter/click: unfold)"


def widget_type_for(entry: Entry) -> type[Widget]:
    """The widget class that shows entries of this kind (recycled widgets must match it)."""
    if entry.kind == "assistant":
        return reply_widget_type(entry)
    return {"user": UserMessage, "tool": ToolCallBlock, "thinking": ThinkingBlock}.get(entry.kind, NoticeMessage)


def widget_for(entry: Entry) -> Widget:
    """The widget showing one entry."""
    if entry.kind == "user":
        return UserMessage(entry)
    if entry.kind == "assistant":
        return reply_widget(entry)
    if entry.kind == "tool":
        return ToolCallBlock(entry)
    if entry.kind == "thinking":
        return ThinkingBlock(entry)
    return NoticeMessage(entry)
