"""The approval modal: the exact command or diff, and allow once / always allow (exact, prefix, tool; session or project) / deny."""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass

from rich.console import RenderableType
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from tui_agent.core.agent.permission_rules import DOMAIN_TOOLS, PATTERN_TOOLS, Rule, suggested_prefix
from tui_agent.core.agent.permissions import ApprovalAnswer, RuleScope
from tui_agent.core.agent.command_view import one_line, shape
from tui_agent.ui.approval_detail import approval_detail, is_unified_diff, json_arguments
from tui_agent.ui.screens.scroll_keys import scroll, scroll_bindings
from tui_agent.ui.typeahead import QuestionScreen

COMMAND_TOOLS = (*PATTERN_TOOLS, "run_python")
TITLE_LIMIT = 160
MIN_DETAIL_ROWS, MAX_DETAIL_ROWS = 3, 30
REASON_KEY = "r"
"""Opens a one-line box whose words go to the model with the denial."""
SHORT_SCOPES: dict[RuleScope, str] = {"session": "this session", "project": "this project *"}
"""Short enough for every option to fit one line of an 80-column terminal; the footnote says where * is saved."""
SCOPE_LABELS: dict[RuleScope, str] = {"session": "for this session", "project": "for this project (yours: .agent/config.local.toml)"}


@dataclass(frozen=True)
class AnswerChoice:
    """One line of the modal: the key that picks it, its label and the answer it gives."""

    key: str
    label: str
    answer: ApprovalAnswer


def answer_choices(kind: str, tool: str, subject: str | None, protected: bool = False) -> list[AnswerChoice]:
    """What the person may answer: rules are offered only where a rule can cover the request."""
    choices = [AnswerChoice("y", "Allow once", ApprovalAnswer(True))]
    if not protected and kind not in ("network", "plan"):
        rules: list[tuple[str, str, str]] = []
        if tool in PATTERN_TOOLS and subject and "\n" not in subject:
            rules.append(("e", "Always allow this exact command", Rule(tool, subject.strip()).text))
            prefix = suggested_prefix(subject)
            if prefix:
                short = prefix if len(prefix) <= 24 else prefix[:23] + "…"
                rules.append(("p", f"Always allow `{short} *`", Rule(tool, prefix, prefix=True).text))
        if tool in DOMAIN_TOOLS and subject:  # web_fetch: the host (subject is "domain:HOST")
            rules.append(("d", f"Always allow {subject.partition(':')[2]}", Rule(tool, subject).text))
        rules.append(("t", f"Always allow every {tool} call", Rule(tool).text))
        for key, label, rule in rules:
            scopes: tuple[tuple[str, RuleScope], ...] = ((key, "session"), (key.upper(), "project"))
            for scope_key, scope in scopes:
                text = f"{label}, {SHORT_SCOPES[scope]}"
                choices.append(AnswerChoice(scope_key, text, ApprovalAnswer(True, rule, scope)))
    choices.append(AnswerChoice(REASON_KEY, "Deny, and tell the model why or what to do instead", ApprovalAnswer(False)))
    choices.append(AnswerChoice("n", "Deny (esc)", ApprovalAnswer(False)))
    return choices


class ApprovalScreen(QuestionScreen[ApprovalAnswer]):
    """Dismisses with an ApprovalAnswer; y allows once, n or Escape denies, the other keys learn a rule."""

    BINDINGS = [Binding("escape", "answer('n')", "Deny", show=False), *scroll_bindings("pageup", "pagedown")]

    def __init__(self, *, kind: str, tool: str, summary: str, detail: str, subject: str | None = None,
                 protected: bool = False, notes: tuple[str, ...] = ()) -> None:
        super().__init__(classes=f"-{kind}")
        self.notes = notes
        self.kind = kind
        self.tool = tool
        self.summary = summary
        self.detail = detail
        self.choices = answer_choices(kind, tool, subject, protected)

    def compose(self) -> ComposeResult:
        with Vertical(id="approval-dialog", classes="dialog"):
            yield Static(self._title(), id="approval-title")
            with VerticalScroll(id="approval-detail"):
                yield Static(self._detail_renderable())
            for note in self.notes:
                yield Static(Text(f"⚠ {note}", style="bold #e5c07b"), classes="approval-note")
            options = [Option(Text.assemble((f" {choice.key} ", "bold reverse"), "  ", choice.label), id=choice.key)
                       for choice in self.choices]
            yield OptionList(*options, id="approval-choices")
            yield Input(placeholder="what should the model do instead? (enter sends, esc denies)", id="approval-reason")
            if any(choice.answer.scope == "project" and choice.answer.rule for choice in self.choices):
                yield Static(Text(f"* {SCOPE_LABELS['project']}", style="dim"), id="approval-footnote")

    def _title(self) -> Text:
        """The question on one line; a command's own text is shown whole in the detail, never only its first line."""
        title = Text()
        title.append(f"Approve {self.kind}? ", style="bold")
        title.append(f"{self.tool}: ", style="bold #e5c07b")
        if self.tool in COMMAND_TOOLS and not is_unified_diff(self.detail) and json_arguments(self.detail) is None:
            title.append(f"the command below ({shape(self.detail)})")
            if self.kind == "network":  # what the grant reaches, as the summary says it ("only pypi.org, …")
                reach = re.search(r"WITH NETWORK ACCESS \([^)]*\)", self.summary)
                title.append(" " + (reach.group(0) if reach else "WITH NETWORK ACCESS"), style="bold")
        else:
            title.append(one_line(self.summary, TITLE_LIMIT))
        return title

    def _detail_renderable(self) -> RenderableType:
        return approval_detail(self.kind, self.tool, self.detail)

    def on_mount(self) -> None:
        with contextlib.suppress(NoMatches):  # NoMatches: pruned as it mounts (the app quit as it opened)
            options = self.query_one("#approval-choices", OptionList)
            options.highlighted = len(self.choices) - 1  # Enter alone denies
            options.focus()
            self.call_after_refresh(self._fit_detail)

    def on_resize(self, event: events.Resize) -> None:
        self.call_after_refresh(self._fit_detail)

    def _fit_detail(self) -> None:
        """The diff or command scrolls in what the screen leaves once the title, notes and every option are shown."""
        dialog = self.query_one("#approval-dialog", Vertical)
        detail = self.query_one("#approval-detail", VerticalScroll)
        others = sum(child.outer_size.height for child in dialog.children if child is not detail)
        room = self.size.height - dialog.styles.gutter.height - others - detail.styles.margin.height
        height = max(MIN_DETAIL_ROWS, min(MAX_DETAIL_ROWS, room))
        if detail.styles.max_height is None or detail.styles.max_height.value != height:
            detail.styles.max_height = height

    def answer_key(self, event: events.Key) -> None:
        if self.focused is self.query_one("#approval-reason", Input):
            return
        if event.character and any(choice.key == event.character for choice in self.choices):
            event.stop()
            self.action_answer(event.character)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_answer(str(event.option.id))

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.dismiss(ApprovalAnswer(False, reason=event.value.strip()))

    def action_answer(self, key: str) -> None:
        if key == REASON_KEY:
            self._ask_reason()
            return
        for choice in self.choices:
            if choice.key == key:
                self.dismiss(choice.answer)
                return

    def _ask_reason(self) -> None:
        """The one-line box for the denial's reason takes the place of the choices."""
        self.query_one("#approval-choices", OptionList).display = False
        box = self.query_one("#approval-reason", Input)
        box.display = True
        box.focus()

    def action_scroll_text(self, how: str) -> None:
        """pgup/pgdn scroll a long diff or command (the options keep the focus and ↑/↓)."""
        scroll(self.query_one("#approval-detail", VerticalScroll), how)
