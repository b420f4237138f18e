"""What the UI's controllers may ask of the app (`UIHost`, a Protocol the app implements): they never hold the app itself."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    from textual.message import Message
    from textual.notifications import SeverityLevel
    from textual.screen import Screen
    from textual.worker import Worker, WorkType

    from tui_agent.core.runtime import Runtime
    from tui_agent.core.runtime_state import RuntimeState
    from tui_agent.ui.context_usage import UsageFigures
    from tui_agent.ui.runtime_bridge import LaunchOptions
    from tui_agent.ui.widgets.conversation import Conversation
    from tui_agent.ui.widgets.prompt import PromptArea

ScreenResult = TypeVar("ScreenResult")
ResultType = TypeVar("ResultType")


class Ask(Protocol):
    """Push a modal and wait for its result (None: dismissed without one)."""

    async def __call__(self, screen: Screen[ScreenResult]) -> ScreenResult | None: ...


class UIHost(Protocol):
    """Notify, ask, show a pane, refresh the catalog; the runtime; the conversation and prompt box a controller renders
    into (the catalog pane is given only to the catalog's controllers); and the session's shared state, which the
    header is bound to (set it here, never on a widget)."""

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

    def call_later(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> bool: ...

    def call_from_thread(self, callback: Callable[..., Any | Awaitable[Any]], *args: Any, **kwargs: Any) -> Any: ...

    def refresh_bindings(self) -> None: ...

    def post_message(self, message: Message) -> bool:
        """Thread-safe: how events from the core's listeners reach the app."""
        ...

    @property
    def screen_stack(self) -> list[Screen[Any]]:
        """Empty while the app shuts down (its widgets may be gone)."""
        ...

    @property
    def conversation(self) -> Conversation: ...

    @property
    def prompt_area(self) -> PromptArea: ...
