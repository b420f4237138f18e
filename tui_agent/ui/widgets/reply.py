"""A finished assistant reply: its prose as selectable rendered Markdown, each fenced code block scrolling sideways."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widget import Widget

from tui_agent.ui.widgets.code_scroll import ScrollingCode
from tui_agent.ui.widgets.entry import Entry
from tui_agent.ui.widgets.prose_lines import ProseLines
from tui_agent.ui.widgets.rendered import rendered_messages
from tui_agent.ui.widgets.reply_parts import ReplyPart, parts_of


def has_code(entry: Entry) -> bool:
    """The reply has a top-level fenced code block (it is shown by a `FencedReply`)."""
    return any(part.kind == "code" for part in parts_of(entry.text))


def reply_classes(entry: Entry) -> str:
    return "message assistant" + (" -continued" if entry.continued else "")


class AssistantText(ProseLines):
    """A finished assistant message without code blocks (most are): one light widget, its lines rendered once per width."""

    def __init__(self, entry: Entry) -> None:
        super().__init__(rendered_messages.get(entry, entry.text), classes=reply_classes(entry))
        self.entry = entry

    def rebind(self, entry: Entry) -> None:
        """Show another entry (the conversation recycles widgets as its window slides)."""
        self.entry = entry
        self.set_class(entry.continued, "-continued")
        self.show(rendered_messages.get(entry, entry.text))


class FencedReply(Widget):
    """A finished assistant message with code blocks: a light widget per part, prose and code in turn."""

    DEFAULT_CSS = "FencedReply { height: auto; layout: vertical; }"

    def __init__(self, entry: Entry) -> None:
        super().__init__(classes=reply_classes(entry))
        self.entry = entry
        self._parts = parts_of(entry.text)

    def compose(self) -> ComposeResult:
        for index, part in enumerate(self._parts):
            yield self._part_widget(index, part)

    def _part_widget(self, index: int, part: ReplyPart) -> Widget:
        if part.kind == "code":
            return ScrollingCode(part.text, part.language)
        return ProseLines(rendered_messages.get(self.entry, part.text, index))

    def rebind(self, entry: Entry) -> None:
        """Show another entry: the part widgets are reused when its parts are of the same kinds in the same order."""
        self.entry = entry
        self.set_class(entry.continued, "-continued")
        parts = parts_of(entry.text)
        if parts == self._parts and self.is_mounted:
            return
        self._parts = parts
        if not self.is_mounted:
            return  # compose shows them
        children = list(self.children)
        if [type(child) for child in children] == [ScrollingCode if part.kind == "code" else ProseLines for part in parts]:
            for index, (child, part) in enumerate(zip(children, parts, strict=True)):
                if isinstance(child, ScrollingCode):
                    child.show(part.text, part.language)
                elif isinstance(child, ProseLines):
                    child.show(rendered_messages.get(entry, part.text, index))
            return
        self.remove_children()
        self.mount_all([self._part_widget(index, part) for index, part in enumerate(parts)])


def reply_widget_type(entry: Entry) -> type[AssistantText | FencedReply]:
    return FencedReply if has_code(entry) else AssistantText


def reply_widget(entry: Entry) -> AssistantText | FencedReply:
    return reply_widget_type(entry)(entry)
