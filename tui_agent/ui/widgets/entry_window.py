"""A scrolling window over a transcript's entries: widgets for a bounded slice of them, slid as the reader scrolls."""

from __future__ import annotations

import asyncio

from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.types import AnimationLevel, CallbackType, EasingFunction
from textual.widget import Widget
from textual.widgets import Static

from tui_agent.ui.heap import release_dropped_widgets
from tui_agent.ui.transcript import Transcript
from tui_agent.ui.widgets.conversation_edges import LOAD_STEP, EdgeMarker, NewBelow, next_unrendered
from tui_agent.ui.widgets.messages import AssistantText, Entry, FencedReply, widget_for, widget_type_for
from tui_agent.ui.widgets.rendered import prose_renderings

INITIAL_WINDOW = 20
MAX_MOUNTED = 30
TALL_WINDOW = 24
"""Widgets kept when the mounted ones are over three screens tall: fewer rendered lines alive for each full garbage
collection to walk, and still two screens and more to scroll through before the next slide."""


class EntryWindow(VerticalScroll, can_focus=True):
    """`entries[first_mounted:last_mounted]` have widgets; scrolling past either end slides that window.

    What is live belongs to the subclass (the Conversation): `_finish_widget` ends it before the window is emptied, and
    while `streaming` a slide up keeps the bottom mounted."""

    BINDINGS = [Binding("ctrl+u", "load_earlier", "Earlier", show=False)]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._restoring = 0
        """Window slides whose scroll position is not restored yet: the scroll offset meanwhile is not the reader's."""
        self._follows = 0
        """How many times `follow` ran: a position restored after a slide is dropped when one ran meanwhile."""
        self.transcript = Transcript()
        self.first_mounted = 0
        self.last_mounted = 0
        self._earlier = EdgeMarker("earlier", self.load_earlier)
        self._later = EdgeMarker("later", self.load_later)
        self.new_below = NewBelow(self.follow)
        self.welcome = Static("", id="welcome", classes="welcome")
        """The first screen's line: where this is and the keys to start with (shown while the top of the transcript is)."""
        self._widgets: dict[int, Widget] = {}  # id(entry) -> its mounted widget
        self._prerendering = False
        self._updating = asyncio.Lock()  # an event's entries get their widgets before the next event is folded in

    @property
    def entries(self) -> list[Entry]:
        return self.transcript.entries

    @property
    def streaming(self) -> bool:
        """A reply is being streamed into the newest widget (the subclass says)."""
        return False

    async def _finish_widget(self) -> None:
        """End the live widget, if any, before the window is emptied (the subclass does)."""

    def compose(self):  # type: ignore[no-untyped-def]
        yield self.welcome
        yield self._earlier
        yield self._later
        yield self.new_below

    def on_mount(self) -> None:
        self._update_markers()
        self.anchor()

    # ------------------------------------------------------------------ window bookkeeping

    def _update_markers(self) -> None:
        earlier, later = self.first_mounted, len(self.entries) - self.last_mounted
        self.welcome.display = earlier == 0 and bool(self.welcome.content)
        self._earlier.update(f"▲ {earlier:,} earlier messages — scroll up, or ctrl+u")
        self._earlier.display = earlier > 0
        self._later.update(f"▼ {later:,} newer messages — scroll down")
        self._later.display = later > 0
        self.call_after_refresh(self._prerender_edges)

    def _prerender_edges(self) -> None:
        """Render the messages just outside the window now, a few milliseconds at a time, before the reader gets there."""
        if self.mounted_count < len(self.entries) and not self._prerendering:
            self._prerendering = True
            self.run_worker(self._prerender(), group="prerender")

    async def _prerender(self) -> None:
        try:
            while (width := self._message_width()) and (
                    entry := next_unrendered(self.entries, self.first_mounted, self.last_mounted, width)) is not None:
                options = self.app.console_options.update_width(width).update(highlight=False)
                for prose in prose_renderings(entry, entry.text):
                    prose.render(self.app.console, options)
                await asyncio.sleep(0)
        finally:
            self._prerendering = False

    def _message_width(self) -> int:
        """The width assistant messages render at (0 until one is laid out)."""
        return next((widget.size.width for widget in self._widgets.values() if isinstance(widget, (AssistantText, FencedReply)) and widget.size.width), 0)

    def _make(self, entry: Entry) -> Widget:
        widget = widget_for(entry)
        self._widgets[id(entry)] = widget
        return widget

    def _unmount(self, entries: list[Entry]) -> None:
        widgets = [self._widgets.pop(id(entry)) for entry in entries if id(entry) in self._widgets]
        if widgets:
            self.remove_children(widgets)

    @property
    def mounted_count(self) -> int:
        return self.last_mounted - self.first_mounted

    @property
    def at_end(self) -> bool:
        return self.last_mounted == len(self.entries)

    async def load_transcript(self, transcript: Transcript) -> None:
        """Replace everything with `transcript` (a resumed session); mounts only the newest entries."""
        async with self._updating:
            await self._clear()
            self.transcript = transcript
            await self._mount_newest()

    async def _mount_newest(self) -> None:
        """The newest INITIAL_WINDOW entries, a step at a time from the bottom up, a frame apart (each frame lays out
        and renders only a few new messages)."""
        self.first_mounted = self.last_mounted = len(self.entries)
        self.anchor()
        target = max(0, len(self.entries) - INITIAL_WINDOW)
        while self.first_mounted > target:  # a slide up meanwhile (load_earlier) lowers first_mounted too
            start = max(target, self.first_mounted - LOAD_STEP)
            widgets = [self._make(entry) for entry in self.entries[start : self.first_mounted]]
            self.first_mounted = start  # before the mount is awaited: a slide up meanwhile starts above these
            await self.mount_all(widgets, after=self._earlier)
            self._update_markers()
            await self._next_frame()

    async def _next_frame(self) -> None:
        shown = asyncio.Event()
        self.call_after_refresh(shown.set)
        await shown.wait()

    async def clear(self) -> None:
        async with self._updating:
            await self._clear()

    async def _clear(self) -> None:
        await self._finish_widget()
        await self.remove_children(list(self._widgets.values()))  # gone before anything else is mounted
        self.transcript = Transcript()
        self.first_mounted = self.last_mounted = 0
        self._widgets.clear()
        self._update_markers()

    def load_earlier(self, count: int = LOAD_STEP) -> None:
        """Show up to `count` older entries above, dropping as many from the bottom beyond MAX_MOUNTED (their widgets are reused)."""
        if self.first_mounted == 0:
            return
        start = max(0, self.first_mounted - min(count, MAX_MOUNTED - 1))
        anchor = self._widgets.get(id(self.entries[self.first_mounted])) if self.mounted_count else None
        excess = self.mounted_count + (self.first_mounted - start) - self._window_limit()
        dropped: list[Entry] = []
        if excess > 0 and not self.streaming:
            dropped = self.entries[self.last_mounted - excess : self.last_mounted]
            self.last_mounted -= excess
        self.release_anchor()
        self._keep_in_view(anchor)
        self._show(self.entries[start : self.first_mounted], dropped, after=self._earlier)
        self.first_mounted = start
        self._update_markers()

    def load_later(self, count: int = LOAD_STEP) -> None:
        """Show up to `count` newer entries below, dropping as many from the top beyond MAX_MOUNTED (their widgets are reused)."""
        if self.at_end:
            return
        end = min(len(self.entries), self.last_mounted + min(count, MAX_MOUNTED - 1))
        anchor = self._widgets.get(id(self.entries[self.last_mounted - 1])) if self.mounted_count else None
        excess = self.mounted_count + (end - self.last_mounted) - self._window_limit()
        dropped = self.entries[self.first_mounted : self.first_mounted + excess] if excess > 0 else []
        self.first_mounted += len(dropped)
        self._keep_in_view(anchor)
        self._show(self.entries[self.last_mounted : end], dropped, before=self._later)
        self.last_mounted = end
        self._update_markers()

    def _window_limit(self) -> int:
        """How many widgets a slide keeps: MAX_MOUNTED, or TALL_WINDOW when the mounted ones are over three screens tall."""
        mounted_rows = sum(widget.outer_size.height for widget in self._widgets.values())
        return TALL_WINDOW if mounted_rows > 3 * self.size.height else MAX_MOUNTED

    def _show(self, entries: list[Entry], dropped: list[Entry], *, after: Widget | None = None, before: Widget | None = None) -> None:
        """Widgets for `entries`, in order, next to a marker: the dropped entries' widgets of the same kind are rebound
        and moved (no widget is built or torn down, so no garbage for the collector), the others built; leftovers removed."""
        pool: dict[type[Widget], list[Widget]] = {}
        for entry in dropped:
            widget = self._widgets.pop(id(entry), None)
            if widget is not None:
                pool.setdefault(type(widget), []).append(widget)
        previous = after
        for entry in entries:
            reusable = pool.get(widget_type_for(entry))
            place = {"after": previous} if previous is not None else {"before": before}
            if reusable:
                widget = reusable.pop()
                widget.rebind(entry)  # type: ignore[attr-defined]
                self._widgets[id(entry)] = widget
                self.move_child(widget, **place)
            else:
                widget = self._make(entry)
                self.mount(widget, **place)
            if previous is not None:
                previous = widget
        leftovers = [widget for widgets in pool.values() for widget in widgets]
        if leftovers:
            self.remove_children(leftovers)
        release_dropped_widgets()

    def _keep_in_view(self, anchor: Widget | None) -> None:
        """After the next layout, scroll so `anchor` sits where it is now on screen (content changed above or below it)."""
        if anchor is None:
            return
        offset = anchor.virtual_region.y - self.scroll_y
        self._restoring += 1
        followed = self._follows

        def restore() -> None:
            try:
                if anchor.parent is self and followed == self._follows:  # a `follow` since wins: the end is shown
                    self.scroll_to(y=max(0, anchor.virtual_region.y - offset), animate=False, immediate=True)
            finally:
                self._restoring -= 1

        self.call_after_refresh(restore)

    def action_load_earlier(self) -> None:
        self.load_earlier()

    def _load_at_edges(self) -> None:
        if self._restoring:
            return  # mid-slide: the layout changed and the reader's position is about to be put back
        if self.scroll_y <= 0 and self.first_mounted > 0:
            self.load_earlier()
        elif self.scroll_y >= self.max_scroll_y and not self.at_end:
            self.load_later()

    @property
    def following(self) -> bool:
        """The view stays at the end as content arrives (the reader has not scrolled away from it)."""
        return self.is_anchored and not self._anchor_released

    def follow(self) -> None:
        """Scroll to the end and stay there as content arrives (the person sent something, or asked to); a reader's
        scroll still in flight (a PageUp's animation, a slide's position about to be put back) is dropped."""
        self.app.animator.force_stop_animation(self, "scroll_y")  # before the count: a slide its last step makes is dropped
        self._follows += 1
        if not self.at_end:
            self.run_worker(self._jump_to_end_in_turn(), group="follow")
        self.anchor()
        self.new_below.display = False

    def scroll_to(self, x: float | None = None, y: float | None = None, *, animate: bool = True, speed: float | None = None,
                  duration: float | None = None, easing: EasingFunction | str | None = None, force: bool = False,
                  on_complete: CallbackType | None = None, level: AnimationLevel = "basic", immediate: bool = False,
                  release_anchor: bool = True) -> None:
        """Textual's, but a scroll deferred to the next refresh (PageUp's, Home's) is dropped when `follow` runs before that
        refresh: an Enter read in the same burst of input as a PageUp sends, and what it sends is shown (Textual's own
        deferred scroll would release the anchor `follow` just set, and the reply would stream in below the view)."""
        def scroll() -> None:
            super(EntryWindow, self).scroll_to(x, y, animate=animate, speed=speed, duration=duration, easing=easing, force=force,
                                               on_complete=on_complete, level=level, immediate=True, release_anchor=release_anchor)

        if immediate:
            scroll()
            return
        if release_anchor:
            self.release_anchor()
        for axis, target in (("scroll_x", x), ("scroll_y", y)):
            if target is not None:
                self.app.animator.force_stop_animation(self, axis)
        followed = self._follows
        self.call_after_refresh(lambda: scroll() if followed == self._follows else None)

    def _note_new_content(self) -> None:
        """Something was added: a reader scrolled up is told, never moved."""
        if not self.following:
            self.new_below.display = True

    def watch_scroll_y(self, old: float, new: float) -> None:
        # while following, the offset is the layout's (an anchored view shorter than the pane sits at a negative offset
        # that a resize or a new mount clamps to 0): only a reader's scroll, which releases the anchor, slides the window
        moved_by_reader = not self.following
        super().watch_scroll_y(old, new)
        if self.new_below.display and self.following:
            self.new_below.display = False
        if round(old) != round(new) and moved_by_reader:
            self._load_at_edges()

    def action_page_up(self) -> None:
        self._load_at_edges()
        super().action_page_up()

    def action_page_down(self) -> None:
        self._load_at_edges()
        super().action_page_down()

    def action_scroll_up(self) -> None:
        self._load_at_edges()
        super().action_scroll_up()

    def action_scroll_home(self) -> None:
        self._load_at_edges()
        super().action_scroll_home()

    async def _jump_to_end_in_turn(self) -> None:
        """`jump_to_end` once no entry is being shown: the prompt just sent is shown meanwhile, and two remounts of the
        window at once would interleave their widgets (the newest then sat above older ones, the view off the end)."""
        async with self._updating:
            await self.jump_to_end()
            self.anchor()

    async def jump_to_end(self, pending: int = 0) -> None:
        """New activity while reading old messages: show the newest window again (but for the last `pending` entries,
        which get their widgets next)."""
        end = len(self.entries) - pending
        if self.last_mounted == end:
            return
        self._unmount(self.entries[self.first_mounted : self.last_mounted])
        self.first_mounted = max(0, end - INITIAL_WINDOW)
        self.last_mounted = end
        await self.mount_all([self._make(entry) for entry in self.entries[self.first_mounted : end]], before=self._later)
        self._update_markers()
        self.anchor()
