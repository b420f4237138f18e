"""The tuiagent Textual app: conversation, catalog and diff panes over the core runtime (ui/launch.py starts it for the CLI)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from textual import events, on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.command import CommandPalette
from textual.reactive import reactive
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen, Screen
from textual.widgets import Tab, Tabs

from tui_agent.ui.catalog_sync import CatalogSync, CoreEvent, McpChanged
from tui_agent.ui.command_registry import CommandRegistry
from tui_agent.ui.modal import ask_modal
from tui_agent.ui.context_usage import UsageFigures
from tui_agent.ui.catalog_actions import CatalogActions
from tui_agent.ui.app_keys import QUIT_AGAIN_S, copy_selection, cycle_permission_mode, interrupt
from tui_agent.ui.everyday_actions import (DEFAULT_SIDE_SHARE, apply_preferences, apply_side_share, edit_in_editor, register_everyday_commands,
                                           resize_side)
from tui_agent.ui import lean_strips
from tui_agent.core.bulkload import collect_again
from tui_agent.ui.heap import collect_between_frames, freeze_long_lived, thaw
from tui_agent.ui.screens.trust import settle_trust
from tui_agent.ui.runtime_bridge import NO_MODEL, LaunchOptions, RuntimeOpener, open_runtime_for_ui
from tui_agent.ui.runtime_lifecycle import RuntimeLifecycle
from tui_agent.ui.palette import palette_commands
from tui_agent.ui.panes import PaneLayout
from tui_agent.ui.prompt_completion import PromptCompletion
from tui_agent.ui.slash_commands import SlashCommands
from tui_agent.ui.slash_undo import UndoCommands
from tui_agent.ui.slash import BUILTIN_COMMANDS
from tui_agent.ui.trust_switch import slash_trust
from tui_agent.ui.turn import TurnRunner
from tui_agent.ui.typed import types_while_reading
from tui_agent.ui.warm_up import warm_up_rendering
from tui_agent.ui.first_request import after_first_request
from tui_agent.ui.terminal_safety import draw_control_characters_visibly
from tui_agent.ui.widgets.catalog_pane import CatalogPane
from tui_agent.ui.widgets.conversation import Conversation
from tui_agent.ui.widgets.diff_pane import DiffPane
from tui_agent.ui.widgets.footer_slot import FooterSlot
from tui_agent.ui.widgets.header import StatusHeader
from tui_agent.ui.widgets.messages import Entry
from tui_agent.ui.catalog_rows import CatalogRow
from tui_agent.ui.widgets.prompt import PromptArea
from tui_agent.ui.widgets.completion_menu import CompletionMenu
from tui_agent.ui.widgets.queued_prompts import QueuedPrompts

if TYPE_CHECKING:  # the core is imported in a thread after the first frame (runtime_bridge)
    from tui_agent.core.events import Event as CoreEventPayload
    from tui_agent.core.agent.loop import Agent
    from tui_agent.core.runtime import Runtime
    from tui_agent.core.runtime_state import RuntimeState
    from tui_agent.ui.host import ScreenResult

NARROW_WIDTH = 120
COLLECTOR_OFF_AT_MOST_S = 5.0
"""The garbage collector is turned on this long after the first frame at the latest, however long the opening takes."""
PROMPT_HINT = "Ask, /help, @file · enter sends · ctrl+j new line · ↑ history · pgup/pgdn scroll · tab next pane · shift+tab mode"
WELCOME = ("[b]tuiagent[/b] in {root}: ask for anything; the agent writes Python tools it reuses (the catalog, F3).\n"
           "enter sends · /help commands and keys · @file attaches · ctrl+p palette · ctrl+c twice or ctrl+q quits")
PANE_ACTIONS = ("show_pane", "next_pane", "zoom")
PANE_KEYS = Binding.Group("chat/catalog/diff/zoom", compact=True)  # one footer item: narrow terminals keep the pane's own keys


class TuiAgentApp(App[int]):
    """Three panes; every action goes through the runtime's core objects (catalog, agent, sandbox). The app is the
    controllers' `ui.host.UIHost`: they get it as that Protocol (and each other as they need), never as the app."""

    CSS_PATH = "app.tcss"
    TITLE = "tuiagent"
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW_WIDTH, "-wide")]
    BINDINGS = [
        Binding("escape", "cancel_turn", "Stop the turn or run", show=False),  # the header says it while busy
        Binding("escape", "close_palette", show=False, priority=True),  # at once: a pane key right after it finds the palette gone
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
    # the session's shared state: controllers set these, the header is bound to them (data_bind)
    model: reactive[str] = reactive("…")
    branch: reactive[str] = reactive("")
    busy: reactive[bool] = reactive(False)
    loading: reactive[str] = reactive("")
    """What is still loading while the project opens ("" once everything is up)."""
    usage: reactive[UsageFigures] = reactive(UsageFigures())
    permission_mode: reactive[str] = reactive("ask")
    sandbox_tier: reactive[str] = reactive("")
    mcp_status: reactive[str] = reactive("")
    mcp_failed: reactive[bool] = reactive(False)

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
        options = options or LaunchOptions()
        # the runtime's project watcher: hot reload and other processes' changes (tests of a still screen turn it off)
        self.options = replace(options, extra={"watch": watch_catalog, **options.extra})
        self.clock = clock
        self.panes = PaneLayout(self)
        self.interrupted_at = -QUIT_AGAIN_S
        """When ctrl+c last asked "again to quit" (another press within QUIT_AGAIN_S quits)."""
        self.side_share = DEFAULT_SIDE_SHARE
        self.commands = CommandRegistry(BUILTIN_COMMANDS)
        """The slash commands: what /help, the palette and completion list, and what a typed `/name` runs."""
        # the widgets, looked up when used (they are composed later), go only to the controllers that render into them
        self.turns = TurnRunner(self, view=lambda: self.conversation, prompt_box=lambda: self.prompt_area)
        self.catalog_sync = CatalogSync(self, show_event=self.turns.show_feed_event, pane=lambda: self.catalog_pane)
        self.catalog_sync.hold_first = lambda: after_first_request(self.turns, self.agent_now())
        self.prompt_completion = PromptCompletion(self, self.commands, files_loaded=lambda: self.prompt_area.update_completions())
        self.undo_commands = UndoCommands(self, self.turns, self.commands)
        self.catalog_actions = CatalogActions(self, submit_prompt=self.turns.submit_prompt, pane=lambda: self.catalog_pane,
                                              conversation_view=lambda: self.conversation,
                                              run_stoppable=self.turns.run_stoppable)
        self.slash_commands = SlashCommands(self, self.commands, self.turns, self.catalog_actions)
        self.commands.add("trust", partial(slash_trust, self, self.turns))
        register_everyday_commands(self, self.commands, lambda: self.conversation)
        self.turns.connect(run_input=self.slash_commands.handle_input, after_turn=partial(self.undo_commands.show_turn_edits, when="turn_end"))
        self.lifecycle = RuntimeLifecycle(self, runtime_opener, turns=self.turns, catalog_sync=self.catalog_sync,
                                          view=lambda: self.conversation, settle_trust=partial(settle_trust, self),
                                          quit=lambda message: self.exit(0, message=message))

    def get_default_screen(self) -> Screen[Any]:
        """The main screen, born with the classes its first frame needs (each class added after mounting restyles every widget)."""
        width = self.size.width
        breakpoint = next(name for edge, name in sorted(self.HORIZONTAL_BREAKPOINTS, reverse=True) if width >= edge)
        return Screen(id="_default", classes=f"-show-conversation {breakpoint}")

    def compose(self) -> ComposeResult:
        yield StatusHeader(id="header").data_bind(TuiAgentApp.model, TuiAgentApp.branch, TuiAgentApp.busy, TuiAgentApp.usage,
                                                  TuiAgentApp.permission_mode, TuiAgentApp.sandbox_tier, still_loading=TuiAgentApp.loading,
                                                  mcp=TuiAgentApp.mcp_status, mcp_failed=TuiAgentApp.mcp_failed)
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
        yield FooterSlot(id="footer-slot")

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
        self.panes.prepare()
        self.model = self.options.model or "…"
        self.loading = "the project"
        self.prompt_area.focus()
        self.call_after_refresh(self.open_runtime)  # the first frame is painted before any of the work starts

    async def mount_footer(self) -> None:
        """The key footer in its row on the main screen (a modal may be up by then), unless mounted already."""
        for slot in list(self.screen_stack[0].query(FooterSlot)) if self.screen_stack else []:
            await slot.become_footer()

    def agent_now(self) -> Agent | None:
        """The agent a prompt goes to now (None while opening, restricted without one, or without a model)."""
        from tui_agent.core.runtime_state import agent_of

        return agent_of(self.state)

    @work(exclusive=True, group="runtime")
    async def open_runtime(self) -> None:
        """Open the project's runtime off the first frame, so the screen is interactive at once. `tuiagent` starts
        with the collector off (cli.entry): what the opening builds lives on, so it stays off until a prompt typed
        meanwhile has reached the model, or a few seconds at most (a modal waiting for the person)."""
        fallback = self.set_timer(COLLECTOR_OFF_AT_MOST_S, collect_again)
        opened = await self.lifecycle.open()
        if opened is not None:
            await after_first_request(self.turns, self.agent_now())
        await self.mount_footer()
        fallback.stop()
        collect_again()
        if opened is not None:
            await asyncio.to_thread(warm_up_rendering)
            freeze_long_lived()
            self.set_interval(0.05, collect_between_frames)

    @property
    def runtime(self) -> Runtime | None:
        return self.lifecycle.runtime

    @property
    def ready(self) -> asyncio.Event:
        """Set once the project's runtime has opened, or failed to."""
        return self.lifecycle.ready

    @property
    def state(self) -> RuntimeState:
        return self.lifecycle.state

    @property
    def opening(self) -> bool:
        return self.lifecycle.opening

    def model_name(self) -> str:
        return self.lifecycle.model_name()

    async def reopen_runtime(self, options: LaunchOptions, *, clear_conversation: bool) -> Runtime | None:
        return await self.lifecycle.reopen(options, clear_conversation=clear_conversation)

    def schedule_catalog_refresh(self, select: str | None = None) -> None:
        """Refresh the catalog pane soon (bursts coalesce); `select` a row by name once it is there."""
        self.catalog_sync.schedule(select)

    def refresh_branch(self) -> None:
        self.catalog_sync.refresh_branch()

    def request_catalog_action(self, action: str, row: CatalogRow) -> None:
        self.catalog_actions.request(action, row)

    def get_system_commands(self, screen: Screen[Any]) -> Iterable[SystemCommand]:
        """ctrl+p: Textual's own commands (quit, theme, keys, screenshot), then tuiagent's."""
        yield from super().get_system_commands(screen)
        yield from palette_commands(self, self.prompt_area, self.catalog_pane, self.diff_pane)

    @property
    def narrow(self) -> bool:
        return self.panes.narrow

    def no_model_message(self) -> str:
        return NO_MODEL

    async def add_notice(self, text: str, level: str = "info") -> None:
        await self.conversation.add(Entry("notice", text=text, level=level))

    # ---------------------------------------------------------------- modals from workers and callbacks

    async def ask(self, screen: Screen[ScreenResult]) -> ScreenResult | None:
        """Push a modal and wait for its result (None if dismissed without one), from a worker or any task on the app's loop."""
        return await ask_modal(self, screen)

    # ---------------------------------------------------------------- panes

    def action_show_pane(self, pane: str) -> None:
        self.panes.show(pane)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Pane keys act on the main screen only (a modal keeps its keys; ctrl+c is its escape)."""
        if action == "interrupt" and isinstance(self.screen, ModalScreen):
            return True
        if action in (*PANE_ACTIONS, "interrupt", "cycle_permission_mode") and len(self.screen_stack) > 1:
            return False
        if action == "close_palette":
            return isinstance(self.screen, CommandPalette)
        if action == "cancel_turn":
            return self.turns.running  # only then: Esc otherwise goes on to the focused widget
        return True

    async def action_close_palette(self) -> None:
        await self.run_action("escape", self.screen)

    def action_zoom(self) -> None:
        self.panes.zoom()

    def action_next_pane(self) -> None:
        self.panes.next()

    def reveal_diff(self) -> None:
        self.panes.reveal_diff()

    def show_diff(self, title: str, diff_text: str, *, subject: str = "") -> None:
        self.diff_pane.show(title, diff_text, subject=subject)

    @on(Tabs.TabActivated, "#pane-tabs")
    def _tab_activated(self, event: Tabs.TabActivated) -> None:
        self.panes.tab_activated(event)

    def action_cancel_turn(self) -> None:
        self.turns.cancel()

    def action_cycle_permission_mode(self) -> None:
        cycle_permission_mode(self)

    def action_edit_prompt(self) -> None:
        edit_in_editor(self, self.prompt_area)

    def action_resize_side(self, step: int) -> None:
        resize_side(self, step)

    def on_resize(self, event: events.Resize) -> None:
        if self.side_share != DEFAULT_SIDE_SHARE:  # the chosen widths side by side only: narrow, one pane fills the screen
            self.call_after_refresh(apply_side_share, self)

    def action_interrupt(self) -> None:
        if copy_selection(self.screen, self.focused, self.copy_to_clipboard):
            return
        if isinstance(self.screen, ModalScreen):  # a question: ctrl+c is its escape
            self.simulate_key("escape")
            return
        interrupt(self, self.turns, self.prompt_area)

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not event.is_forwarded and types_while_reading(event, self.focused, self.conversation):
            self.screen.set_focus(self.prompt_area)  # before the key is dispatched: it and the keys after it (Enter too) go there
        await super().on_event(event)

    def on_queued_prompts_edit_requested(self, message: QueuedPrompts.EditRequested) -> None:
        self.turns.return_to_prompt_box(message.text)  # back in the prompt box, which gets the focus
        self.screen.set_focus(self.prompt_area)

    def deliver_core_event(self, event: CoreEventPayload) -> None:
        self.post_message(CoreEvent(event))

    def mcp_changed(self) -> None:
        self.post_message(McpChanged())

    def on_mcp_changed(self) -> None:
        self.catalog_sync.schedule()

    def on_core_event(self, message: CoreEvent) -> None:
        self.catalog_sync.receive(message.event)

    def size_panes(self, side_share: int | None) -> None:
        self.panes.size(side_share)

    def on_catalog_pane_action_requested(self, message: CatalogPane.ActionRequested) -> None:
        self.catalog_actions.request(message.action, message.row)

    def on_catalog_pane_care_requested(self, message: CatalogPane.CareRequested) -> None:
        from tui_agent.ui.catalog_care import open_catalog_care  # the tending modules load when first asked for

        self.run_worker(open_catalog_care(self, self.catalog_actions), group="catalog-care", exclusive=True)

    def on_catalog_pane_pruned_requested(self, message: CatalogPane.PrunedRequested) -> None:
        self.catalog_actions.load_pruned()

    @on(PromptArea.Submitted)
    def _prompt_submitted(self, event: PromptArea.Submitted) -> None:
        self.conversation.follow()  # the person sent something: what it does is shown
        # a worker: slash commands may wait on a modal, which needs the app's message loop free
        self.run_worker(self.slash_commands.handle_input(event.text), group="input")

    def action_slash(self, name: str) -> None:
        self.run_worker(self.slash_commands.handle_input(f"/{name}"), group="slash")

    async def on_unmount(self) -> None:
        await self.lifecycle.close()
        thaw()
