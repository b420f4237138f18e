"""What the UI's controllers may ask of the app (`UIHost`, a Protocol the app implements): they never hold the app itself,
nor reach a widget through it; the conversation and the prompt box are given, as the narrow `ConversationView` and
`PromptBox`, only to the controllers whose job is to render into them."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.screen import Screen
    from textual.worker import Worker, WorkType

    from tui_agent.core.events import Event
    from tui_agent.core.runtime import Runtime
    from tui_agent.core.runtime_state import RuntimeState
    from tui_agent.ui.context_usage import UsageFigures
    from tui_agent.ui.runtime_bridge import LaunchOptions
    from tui_agent.ui.transcript import Transcript
    from tui_agent.ui.widgets.messages import Entry
    from tui_agent.ui.widgets.prompt import PromptHistory

ScreenResult = TypeVar("ScreenResult")
ResultType = TypeVar("ResultType")


class RunStoppable(Protocol):
    """Run a person's own run in the turn's place (busy, Esc stops it: WorkerCancelled) and return its result."""

    async def __call__(self, work: Coroutine[Any, Any, ResultType]) -> ResultType: ...


class Ask(Protocol):
    """Push a modal and wait for its result (None: dismissed without one)."""

    async def __call__(self, screen: Screen[ScreenResult]) -> ScreenResult | None: ...


class ConversationView(Protocol):
    """The conversation as a turn renders into it: core events posted to it as ShowEvent messages (ui/event_messages),
    entries added, tool blocks refreshed (the Conversation widget implements it; the turn runner, a manual tool run
    and `/copy` are given it)."""

    def post_message(self, message: Message) -> bool:
        """Queue a message for it (a ShowEvent: it folds the event in and shows it, in the order posted)."""
        ...

    @property
    def entries(self) -> list[Entry]: ...

    async def add(self, entry: Entry) -> object:
        """Append an entry no event made (a notice, a manual tool run) and show it."""
        ...

    async def echo_prompt(self, prompt: str) -> None: ...

    async def finish_stream(self) -> None: ...

    async def load_transcript(self, transcript: Transcript) -> None: ...

    async def clear(self) -> None: ...

    def tool_entries(self) -> list[Entry]: ...

    def tool_entry(self, call_id: str) -> Entry | None: ...

    def refresh_tool(self, call_id: str) -> None: ...

    def refresh_entry(self, entry: Entry) -> None: ...

    def show_result(self, entry: Entry) -> None:
        """A finished call run outside a turn: its block unfolded with the result, the pane repainted."""
        ...

    def mark_undone(self, turns: list[tuple[str, bool]]) -> None:
        """Each recorded turn (its prompt, whether /undo took it back): the undone ones' entries marked."""
        ...


class PromptBox(Protocol):
    """The prompt box as controllers edit it: its text, replacing it (cursor at the end), its history, the focus."""

    prompt_history: PromptHistory

    @property
    def text(self) -> str: ...

    @text.setter
    def text(self, value: str) -> None: ...

    @property
    def full_text(self) -> str:
        """The text as it is sent (paste tokens replaced by what was pasted)."""
        ...

    def set_text(self, text: str) -> None: ...

    def take_focus(self) -> None: ...

    def action_expand_paste(self) -> None:
        """The paste token at the cursor, else every one in the box, becomes its text (ctrl+o)."""
        ...


class UIHost(Protocol):
    """Notify, ask, show a pane, refresh the catalog; the runtime; background work; and the session's shared state,
    which the header is bound to (set it here, never on a widget: setting `busy` also refreshes the footer's keys).
    No widget is reachable through it (tests/test_layering.py checks)."""

    project_root: Path
    options: LaunchOptions
    model: str
    branch: str
    busy: bool
    loading: str
    usage: UsageFigures
    permission_mode: str
    sandbox_tier: str
    mcp_status: str
    mcp_failed: bool

    @property
    def runtime(self) -> Runtime | None: ...

    @property
    def state(self) -> RuntimeState: ...

    @property
    def is_running(self) -> bool: ...

    @property
    def opening(self) -> bool:
        """The runtime is still opening (a prompt now is queued until it is ready)."""
        ...

    @property
    def narrow(self) -> bool:
        """One pane at a time (the narrow layout): a controller's result on another pane needs a hint."""
        ...

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information", timeout: float | None = None,
               markup: bool = True) -> None: ...

    async def add_notice(self, text: str, level: str = "info") -> None: ...

    async def ask(self, screen: Screen[ScreenResult]) -> ScreenResult | None: ...

    def action_show_pane(self, pane: str) -> None: ...

    def show_diff(self, title: str, diff_text: str, *, subject: str = "") -> None:
        """Put a diff in the diff pane (reveal_diff switches to it in the narrow layout)."""
        ...

    def reveal_diff(self) -> None: ...

    def schedule_catalog_refresh(self, select: str | None = None) -> None: ...

    def refresh_branch(self) -> None: ...

    def no_model_message(self) -> str: ...

    def model_name(self) -> str: ...

    def run_worker(self, work: WorkType[ResultType], name: str | None = "", group: str = "default", description: str = "",
                   exit_on_error: bool = True, start: bool = True, exclusive: bool = False, thread: bool = False) -> Worker[ResultType]: ...

    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool:
        """Run `callback` once the app's pending messages are handled (the next queued prompt, after a turn)."""
        ...

    def deliver_core_event(self, event: Event) -> None:
        """Thread-safe: a core event from a listener (the change feed, the recipe engine) arrives as a CoreEvent message."""
        ...

    def mcp_changed(self) -> None:
        """Thread-safe: an MCP server died or changed its tools; arrives as an McpChanged message (the catalog pane and
        the header follow)."""
        ...
