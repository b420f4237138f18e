"""The tuiagent Textual app: conversation, catalog and diff panes over the core runtime; `run_tui` for the CLI."""

from __future__ import annotations

import argparse
import asyncio
import gc
import importlib
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from rich.markup import escape
from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.widgets import Static, Tab, Tabs
from textual.worker import NoActiveWorker, get_current_worker

from tui_agent.ui.catalog_sync import CatalogSync
from tui_agent.ui.catalog_actions import CatalogActions
from tui_agent.ui.diffs import warm_up_highlighting
from tui_agent.ui.app_keys import QUIT_AGAIN_S, cycle_permission_mode, interrupt
from tui_agent.ui.everyday_actions import DEFAULT_SIDE_SHARE, apply_preferences, apply_side_share, edit_in_editor, resize_side
from tui_agent.ui import lean_strips
from tui_agent.ui.heap import collect_between_frames, freeze_long_lived, thaw
from tui_agent.ui.screens.trust import settle_trust
from tui_agent.ui.runtime_bridge import LaunchOptions, RuntimeOpener, UICallbacks, open_runtime_for_ui
from tui_agent.ui.palette import TuiAgentCommands
from tui_agent.ui.prompt_completion import PromptCompletion
from tui_agent.ui.slash_commands import SlashCommands
from tui_agent.ui.slash_undo import UndoCommands
from tui_agent.ui.turn import TurnRunner
from tui_agent.ui.terminal_safety import draw_control_characters_visibly
from tui_agent.ui.widgets.catalog_pane import CatalogPane
from tui_agent.ui.widgets.conversation import Conversation
from tui_agent.ui.widgets.diff_pane import DiffPane
from tui_agent.ui.widgets.header import StatusHeader
from tui_agent.ui.widgets.messages import Entry
from tui_agent.ui.widgets.prompt import PromptArea
from tui_agent.ui.widgets.completion_menu import CompletionMenu
from tui_agent.ui.widgets.queued_prompts import QueuedPrompts

if TYPE_CHECKING:  # the core is imported in a thread after the first frame (runtime_bridge)
    from tui_agent.core.project import Project
    from tui_agent.core.runtime import Runtime
    from tui_agent.core.runtime_state import RuntimeState

NARROW_WIDTH = 120
PROMPT_HINT = "Ask, /help, @file · enter sends · ctrl+j new line · ↑ history · pgup/pgdn scroll · tab next pane · shift+tab mode"
WELCOME = ("[b]tuiagent[/b] in {root}: ask for anything; the agent writes Python tools it reuses (the catalog, F3).\n"
           "enter sends · /help commands and keys · @file attaches · ctrl+p palette · ctrl+c twice or ctrl+q quits")
PANES = ("conversation", "catalog", "diff")
PANE_ACTIONS = ("show_pane", "next_pane", "zoom")
PANE_KEYS = Binding.Group("chat/catalog/diff", compact=True)  # one footer item: narrow terminals keep the pane's own keys
ScreenResult = TypeVar("ScreenResult")


class TuiAgentApp(App[int]):
    """Three panes; every action goes through the runtime's core objects (catalog, agent, sandbox)."""

    CSS_PATH = "app.tcss"
    COMMANDS = App.COMMANDS | {TuiAgentCommands}  # ctrl+p: tuiagent's commands next to Textual's own
    TITLE = "tuiagent"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_WIDTH, "-wide")]
    BINDINGS = [
        Binding("escape", "cancel_turn", "Cancel turn", show=True),
        # priority: handled the moment the key arrives, so the next key already goes to the pane it selected
        Binding("f2", "show_pane('conversation')", "Chat", priority=True, group=PANE_KEYS),
        Binding("f3", "show_pane('catalog')", "Catalog", priority=True, group=PANE_KEYS),
        Binding("f4", "show_pane('diff')", "Diff", priority=True, group=PANE_KEYS),
        Binding("ctrl+t", "next_pane", "Next pane", show=False, priority=True),
        Binding("f5", "zoom", "Zoom", priority=True, group=PANE_KEYS),
        Binding("ctrl+l", "slash('clear')", "Clear", show=False),
        Binding("ctrl+c", "interrupt", "Interrupt", show=False, priority=True),
        Binding("shift+tab", "cycle_permission_mode", "Permission mode", show=False, priority=True),
        Binding("ctrl+g", "edit_prompt", "Prompt in $EDITOR", show=False),
        Binding("alt+left", "resize_side(1)", "Wider side panes", show=False),
        Binding("alt+right", "resize_side(-1)", "Narrower side panes", show=False),
        Binding("ctrl+q", "quit", "Quit", priority=True, show=False),  # the welcome line and /help say it: the footer keeps the pane's keys
    ]

    def __init__(
        self,
        project_root: str | Path,
        *,
        runtime_opener: RuntimeOpener = open_runtime_for_ui,
        options: LaunchOptions | None = None,
        clock: Callable[[], float] = time.time,
        watch_catalog: bool = True,
    ) -> None:
        draw_control_characters_visibly()  # tool output, model text and file names are untrusted
        super().__init__()
        self.project_root = Path(project_root).resolve()
        self.runtime_opener = runtime_opener
        options = options or LaunchOptions()
        # the runtime's project watcher: hot reload and other processes' changes (tests of a still screen turn it off)
        self.options = replace(options, extra={"watch": watch_catalog, **options.extra})
        self.requested_model = self.options.model
        self.clock = clock
        self.runtime: Runtime | None = None
        self.runtime_error: str | None = None
        self.active_pane = "conversation"
        self.git_declined = False
        self.interrupted_at = -QUIT_AGAIN_S
        """When ctrl+c last asked "again to quit" (another press within QUIT_AGAIN_S quits)."""
        self.side_share = DEFAULT_SIDE_SHARE
        self.ready = asyncio.Event()
        self.turns = TurnRunner(self)
        self.catalog_sync = CatalogSync(self)
        self.prompt_completion = PromptCompletion(self)
        self.undo_commands = UndoCommands(self)
        self.slash_commands = SlashCommands(self)
        self.catalog_actions = CatalogActions(self)

    def get_default_screen(self) -> Screen[Any]:
        """The main screen, born with the classes its first frame needs (each class added after mounting restyles every widget)."""
        width = self.size.width
        breakpoint = next(name for edge, name in sorted(self.HORIZONTAL_BREAKPOINTS, reverse=True) if width >= edge)
        return Screen(id="_default", classes=f"-show-conversation {breakpoint}")

    def compose(self) -> ComposeResult:
        yield StatusHeader(id="header")
        yield Tabs(Tab("Conversation F2", id="tab-conversation"), Tab("Catalog F3", id="tab-catalog"), Tab("Diff F4", id="tab-diff"), id="pane-tabs")
        with Horizontal(id="panes"):
            with Vertical(id="conversation-pane", classes="pane"):
                yield Conversation(id="conversation")
                yield QueuedPrompts(self.turns.queue, id="prompt-queue")
                yield PromptArea(id="prompt", placeholder=PROMPT_HINT, completions=self.prompt_completion.candidates)
                yield CompletionMenu(id="completion-menu")
            with Vertical(id="side"):
                yield CatalogPane(id="catalog-pane", classes="pane", clock=self.clock)
                yield DiffPane(id="diff-pane", classes="pane")
        yield Static(id="footer-slot")  # the footer's row, kept for it until it is mounted after the first frame

    @property
    def conversation(self) -> Conversation:
        return self.query_one("#conversation", Conversation)

    @property
    def catalog_pane(self) -> CatalogPane:
        return self.query_one("#catalog-pane", CatalogPane)

    @property
    def diff_pane(self) -> DiffPane:
        return self.query_one("#diff-pane", DiffPane)

    @property
    def header(self) -> StatusHeader:
        return self.query_one("#header", StatusHeader)

    @property
    def prompt_area(self) -> PromptArea:
        return self.query_one("#prompt", PromptArea)

    def on_mount(self) -> None:
        lean_strips.install()
        freeze_long_lived()  # the modules imported so far: the collections while the project opens walk only what it adds
        apply_preferences(self)
        self.conversation.welcome.update(WELCOME.format(root=escape(self.project_root.name or str(self.project_root))))
        self.conversation.welcome.display = True
        self.query_one("#conversation-pane").border_title = "Conversation"
        self.catalog_pane.border_title = "Catalog"
        self.diff_pane.border_title = "Diff"
        for pane_id in ("#conversation-pane", "#catalog-pane", "#diff-pane"):
            self.query_one(pane_id).ALLOW_MAXIMIZE = True  # type: ignore[misc]  # F5 zooms a whole pane
        self.header.model = self.requested_model or "…"
        self.header.still_loading = "the project"
        self.prompt_area.focus()
        self.call_after_refresh(self.mount_footer)
        self.call_after_refresh(self.open_runtime)  # the first frame is painted before any of the work starts

    async def mount_footer(self) -> None:
        """The key footer, just after the first frame: composing its keys (twice: focus changes the bindings) took a
        good part of that frame. Its row was kept, so nothing moves."""
        from textual.widgets import Footer

        slot = self.query_one("#footer-slot", Static)
        await slot.screen.mount(Footer(compact=True), before=slot)
        await slot.remove()

    def show_loading(self, pending: tuple[str, ...]) -> None:
        """The runtime's startup progress: what is still loading, in the header."""
        self.header.still_loading = ", ".join(pending)

    @work(exclusive=True, group="runtime")
    async def open_runtime(self) -> None:
        """Open the project's runtime off the first frame, so the screen is interactive at once."""
        gc.enable()  # `tuiagent` starts with the collector off until the first frame (cli.entry)
        from tui_agent.ui.screens.git_question import outside_git_answer

        if not await outside_git_answer(self):
            return
        from tui_agent.core.settings import ConfigError  # the core loads after the first frame

        try:
            callbacks = UICallbacks(approve=self.turns.approve, ask_init_git=self.ask_init_git, submit_prompt=self.turns.submit_prompt,
                                    progress=self.show_loading)
            await settle_trust(self, self.project_root, trust_for_run=bool(self.options.extra.get("trust_project")))
            runtime = await self.runtime_opener(self.project_root, callbacks, self.options)
        except ConfigError as exc:  # one precise line: file:line, what is wrong, how to fix it
            self.runtime_error = f"{exc} (fix the file and start tuiagent again)"
            await self.add_notice(f"Could not open the project: {self.runtime_error}", "error")
            self.ready.set()
            return
        except Exception as exc:  # the UI stays up and says what went wrong
            self.runtime_error = f"{type(exc).__name__}: {exc}"
            self.header.still_loading = ""
            await self.add_notice(f"Could not open the project: {self.runtime_error}", "error")
            self.ready.set()
            await self.turns.hand_back_queued()
            return
        self.runtime = runtime
        self.header.still_loading = ""
        await self.runtime_ready(runtime)
        self.ready.set()
        if runtime.agent is None:
            await self.turns.hand_back_queued()
        else:
            self.turns.send_queued()
        await asyncio.to_thread(warm_up_rendering)
        freeze_long_lived()
        self.set_interval(0.05, collect_between_frames)

    async def runtime_ready(self, runtime: Runtime) -> None:
        if runtime.mcp is not None:  # an MCP server asking for input gets a form (headless runs decline)
            runtime.mcp.set_elicitation(self.ask_elicitation)
        header = self.header
        header.model = self.model_name()
        header.sandbox_tier = runtime.sandbox.tier if runtime.sandbox is not None else "none"
        header.permission_mode = runtime.permissions.mode
        self.catalog_sync.refresh_branch()
        self.catalog_sync.start(runtime)
        for problem in runtime.problems:
            await self.add_notice(problem, "error")
        for warning in runtime.settings.warnings:
            await self.add_notice(warning, "warning")
        if runtime.resumed and runtime.session is not None:
            await self.turns.show_session(runtime.session.path, runtime.session.id)
        if runtime.agent is None:
            await self.add_notice(self.no_model_message(), "warning")
        else:
            self.call_later(self.turns.send_queued)  # prompts typed while the project opened
            usage = runtime.agent.usage
            self.header.input_tokens, self.header.output_tokens, self.header.cost_usd = usage.prompt_tokens, usage.output_tokens, usage.cost_usd
        if runtime.recipes is not None:
            self.run_worker(runtime.recipes.session_started(), group="recipes-start")

    @property
    def state(self) -> RuntimeState:
        """The one question for the rest of the UI: opening, restricted, trusted without a model, or ready."""
        if self.runtime is None:
            from tui_agent.core.runtime_state import Opening

            return Opening(self.runtime_error)
        return self.runtime.state

    def model_name(self) -> str:
        runtime = self.runtime
        if runtime is None or runtime.agent is None:
            return "no model"
        return runtime.agent.model or runtime.model or self.requested_model or "default"

    def schedule_catalog_refresh(self, select: str | None = None) -> None:
        """Refresh the catalog pane soon (bursts coalesce); `select` a row by name once it is there."""
        self.catalog_sync.schedule(select)

    def no_model_message(self) -> str:
        lines = [
            "No model is configured, so the agent is off. The catalog, diffs, history and manual tool runs all work.",
            "To talk to Claude: export ANTHROPIC_API_KEY=sk-ant-…",
            "For a local model: export ANTHROPIC_BASE_URL=http://127.0.0.1:11434 (any server speaking the Messages API:",
            "Ollama ≥ 0.14, llama-server, vLLM, LM Studio, LiteLLM), and set `model = \"…\"` in .agent/config.toml.",
            "Then restart tuiagent.",
        ]
        return "\n".join(lines)

    async def add_notice(self, text: str, level: str = "info") -> None:
        await self.conversation.add(Entry("notice", text=text, level=level))

    # ---------------------------------------------------------------- modals from workers and callbacks

    async def ask(self, screen: Screen[ScreenResult]) -> ScreenResult | None:
        """Push a modal and wait for its result (None if dismissed without one), from a worker or any task on the app's loop."""
        try:
            get_current_worker()
        except NoActiveWorker:
            future: asyncio.Future[ScreenResult | None] = asyncio.get_running_loop().create_future()

            def deliver(result: ScreenResult | None) -> None:
                if not future.done():
                    future.set_result(result)

            self.push_screen(screen, callback=deliver)
            try:
                return await future
            except asyncio.CancelledError:
                if screen.is_attached:
                    screen.dismiss(None)
                raise
        try:
            return await self.push_screen(screen, wait_for_dismiss=True)
        except asyncio.CancelledError:
            if screen in self.screen_stack:
                self.pop_screen()
            raise

    async def ask_elicitation(self, server: str, message: str, schema: dict[str, Any]) -> dict[str, Any] | None:
        """An MCP server's request for input (elicitation) as a form; None: the person declined."""
        from tui_agent.ui.screens.elicitation import ElicitationScreen

        return await self.ask(ElicitationScreen(server, message, schema))

    async def ask_init_git(self, project: Project | None = None) -> bool:
        from tui_agent.ui.screens.confirm import ConfirmScreen

        if self.options.init_git:
            return True
        if self.git_declined:  # asked already, before anything was written
            return False
        where = project.root if project is not None else self.project_root
        question = f"[b]{where}[/b] is not a git repository.\nCreate one? Tools are versioned in git; without it the catalog still works but nothing is committed."
        create = await self.ask(ConfirmScreen(question, yes="Create repository", no="Continue without"))
        return bool(create)

    # ---------------------------------------------------------------- panes

    def action_show_pane(self, pane: str) -> None:
        if pane not in PANES:
            return
        self.active_pane = pane
        for name in PANES:
            self.screen.set_class(name == pane, f"-show-{name}")
        tabs = self.query_one("#pane-tabs", Tabs)
        if tabs.active != f"tab-{pane}":
            tabs.active = f"tab-{pane}"
        target = {"conversation": self.prompt_area, "catalog": self.catalog_pane.table}.get(pane) or self.diff_pane.scroll
        # at once, not `target.focus()` (deferred): a key typed right after F3 must reach the pane it selected
        self.screen.set_focus(target)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Pane keys act on the main screen only (a modal keeps its keys)."""
        if action in (*PANE_ACTIONS, "interrupt", "cycle_permission_mode") and len(self.screen_stack) > 1:
            return False
        if action == "cancel_turn":
            return self.turns.running  # the footer shows "esc Cancel turn" only while there is one
        return True

    def action_zoom(self) -> None:
        """Maximize the pane that has focus (F5 again restores the layout)."""
        screen = self.screen
        if screen.maximized is not None:
            screen.minimize()
            return
        focused = self.focused
        for pane_id in ("#conversation-pane", "#catalog-pane", "#diff-pane"):
            pane = self.query_one(pane_id)
            if focused is not None and (focused is pane or pane in focused.ancestors):
                screen.maximize(pane, container=False)
                return

    def reveal_diff(self) -> None:
        """In the narrow layout the diff pane is a tab: switch to it."""
        if self.screen.has_class("-narrow"):
            self.action_show_pane("diff")

    def action_cancel_turn(self) -> None:
        self.turns.cancel()

    def action_cycle_permission_mode(self) -> None:
        cycle_permission_mode(self)

    def action_edit_prompt(self) -> None:
        edit_in_editor(self)

    def action_resize_side(self, step: int) -> None:
        resize_side(self, step)

    def on_resize(self, event: events.Resize) -> None:
        if self.side_share != DEFAULT_SIDE_SHARE:  # the chosen widths side by side only: narrow, one pane fills the screen
            self.call_after_refresh(apply_side_share, self)

    def action_interrupt(self) -> None:
        interrupt(self)

    def on_queued_prompts_edit_requested(self, message: QueuedPrompts.EditRequested) -> None:
        self.turns.edit_queued(message.text)

    def on_catalog_pane_action_requested(self, message: CatalogPane.ActionRequested) -> None:
        self.catalog_actions.request(message.action, message.row)

    def on_catalog_pane_care_requested(self, message: CatalogPane.CareRequested) -> None:
        from tui_agent.ui.catalog_care import open_catalog_care  # the tending modules load when first asked for

        self.run_worker(open_catalog_care(self), group="catalog-care", exclusive=True)

    def on_catalog_pane_pruned_requested(self, message: CatalogPane.PrunedRequested) -> None:
        self.catalog_actions.load_pruned()

    def action_next_pane(self) -> None:
        self.action_show_pane(PANES[(PANES.index(self.active_pane) + 1) % len(PANES)])

    @on(Tabs.TabActivated, "#pane-tabs")
    def _tab_activated(self, event: Tabs.TabActivated) -> None:
        if event.tabs.active != event.tab.id:
            return  # stale: F-keys pressed faster than the tab bar's messages arrive already moved on
        pane = str(event.tab.id).removeprefix("tab-")
        if pane != self.active_pane:
            self.action_show_pane(pane)

    @on(PromptArea.Submitted)
    def _prompt_submitted(self, event: PromptArea.Submitted) -> None:
        self.conversation.follow()  # the person sent something: what it does is shown
        # a worker: slash commands may wait on a modal, which needs the app's message loop free
        self.run_worker(self.slash_commands.handle_input(event.text), group="input")

    def action_slash(self, name: str) -> None:
        self.run_worker(self.slash_commands.handle_input(f"/{name}"), group="slash")

    def farewell(self) -> str:
        """The line printed once the screen is gone: where the conversation is kept and how to come back to it."""
        session = self.runtime.session if self.runtime is not None else None
        if session is None or not session.path.exists():
            return "tuiagent: nothing to resume from this run."
        return f"tuiagent: session {session.id} is kept; `tuiagent --resume {session.id}` (or --continue) goes on with it."

    async def on_unmount(self) -> None:
        if self.runtime is not None:
            try:
                await asyncio.wait_for(self.runtime.aclose(), timeout=5)
            except Exception:  # closing must never block quitting
                pass
        thaw()


def warm_up_rendering() -> None:
    """Import what the first reply and the first diff render with (Markdown, pygments), in a thread after startup."""
    importlib.import_module("tui_agent.ui.widgets.streaming")
    importlib.import_module("rich.markdown")
    warm_up_highlighting()


def launch_options(args: argparse.Namespace) -> LaunchOptions:
    """The runtime-shaping flags the CLI parsed (`tuiagent` without -p)."""
    return LaunchOptions(
        model=args.model,
        resume=args.resume,
        continue_latest=bool(args.continue_latest),
        permission_mode=args.permission_mode,
        sandbox_tier=args.sandbox_tier,
        allowed_tools=tuple(args.allow or ()),
        approve_all=bool(args.yes),
        init_git=bool(args.init_git),
        extra={"trust_project": True} if args.trust_project else {},
    )


def build_app(args: argparse.Namespace, **overrides: Any) -> TuiAgentApp:
    """The app as the CLI builds it (tests use this same factory)."""
    return TuiAgentApp(Path(args.project or "."), options=launch_options(args), **overrides)


def run_tui(args: argparse.Namespace) -> int:
    """Run the TUI until the person quits; the exit code for the CLI."""
    app = build_app(args)
    result = app.run()
    print(app.farewell())
    return int(result or 0)


