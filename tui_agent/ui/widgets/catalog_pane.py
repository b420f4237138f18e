"""The catalog pane: every tool and recipe with status, calls, last use and summary; sort, filter, and action keys."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.lazy import Lazy
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import DataTable, Input, Static

from tui_agent.ui.typed import TypedInput
from tui_agent.ui.catalog_rows import SORT_KEYS, CatalogRow, filter_rows, format_last_used, sort_rows

STATUS_STYLES = {"ok": "green", "broken": "bold red", "drifted": "bold yellow", "unused": "dim", "disabled": "dim italic",
                 "running": "green", "failed": "bold red", "exited": "bold red", "starting": "dim",
                 "untrusted": "bold yellow", "pruned": "italic #c678dd", "suggested": "bold #61afef", "drifted · failing": "bold #e06c75"}
ACCESS_MARKERS = {"-": Text("-", style="dim", justify="center"), "writes": Text("writes", style="bold #e5c07b"),
                  "network": Text("net", style="bold #61afef"), "writes,network": Text("wr+net", style="bold #e5c07b")}
COLUMNS = (("status", "status", 9), ("name", "name", 22), ("access", "access", 6), ("calls", "calls", 5), ("last_used", "last use", 8),
           ("summary", "summary", None))
OPTIONAL_COLUMNS = ("access", "calls", "last_used")
"""Shown, in this order, while the summary keeps MIN_SUMMARY columns (a narrow side pane drops the last ones first)."""
MIN_SUMMARY = 16
NEW_STYLE = "bold #56b6c2"
CELL_PADDING = 2  # DataTable's cell_padding=1 on each side
NEW_MARK = "  new"
"""After the name of a tool a pull (or another program) added or changed, until the person views or uses it."""


def fit_columns(width: int, longest_name: int = 22) -> list[tuple[str, str, int]]:
    """The columns shown in a table `width` cells wide: status, name (as wide as the longest, up to 22) and the summary
    always; the summary takes what is left."""
    widths = {key: size for key, _label, size in COLUMNS if size is not None}
    widths["name"] = max(8, min(widths["name"], longest_name))
    shown = ["status", "name"]
    used = sum(widths[key] + CELL_PADDING for key in shown)
    for key in OPTIONAL_COLUMNS:
        if width - used - widths[key] - CELL_PADDING - CELL_PADDING >= MIN_SUMMARY:
            shown.append(key)
            used += widths[key] + CELL_PADDING
    shown.append("summary")
    labels = {key: label for key, label, _size in COLUMNS}
    widths["summary"] = max(8, width - used - CELL_PADDING)
    return [(key, labels[key], widths[key]) for key, _label, _size in COLUMNS if key in shown]


class CatalogTable(DataTable[Text]):
    """The table itself; action keys live on the pane so they work with the filter focused too."""

    def on_resize(self) -> None:
        pane = self.parent
        if isinstance(pane, CatalogPane):  # mounted after the first frame (textual.lazy): its own size comes later
            pane._fit_columns()


class CatalogFilter(TypedInput):
    """The filter box: Enter keeps the filter and goes to the table; Esc clears it and goes to the table."""

    BINDINGS = [Binding("escape", "clear_and_leave", "Clear filter")]

    def action_clear_and_leave(self) -> None:
        self.value = ""
        pane = self.parent
        if isinstance(pane, CatalogPane):
            self.screen.set_focus(pane.table)


class CatalogPane(Vertical):
    """Shows rows (plain `CatalogRow`s); posts `ActionRequested` for view/run/prune/revert/history/drift."""

    BINDINGS = [
        Binding("v", "request('view')", "View"),
        Binding("r", "request('run')", "Run"),
        Binding("d", "request('prune')", "Prune"),
        Binding("u", "request('revert')", "Revert"),
        Binding("U", "request('revert_to')", "Revert to…", show=False),
        Binding("h", "request('history')", "History"),
        Binding("f", "request('drift')", "Drift"),
        Binding("R", "request('repair')", "Repair", show=False),
        Binding("A", "request('accept_drift')", "Accept drift", show=False),  # asks first; palette and /help name it
        Binding("c", "care", "Care", show=False),
        Binding("a", "request('author')", "Author", show=False),  # on a suggested row
        Binding("x", "request('dismiss')", "Dismiss", show=False),  # on a suggested row
        Binding("s", "cycle_sort", "Sort", show=False),  # the title says "sort: … (s)": the footer keeps room at 80 columns
        Binding("p", "toggle_pruned", "Pruned"),
        Binding("slash", "focus_filter", "Filter"),
    ]

    sort_key: reactive[str] = reactive("name")
    sort_reverse: reactive[bool] = reactive(False)
    filter_text: reactive[str] = reactive("")
    show_pruned: reactive[bool] = reactive(False)

    @dataclass
    class ActionRequested(Message):
        """The person asked for `action` on the selected tool or recipe (`restore` on a pruned one)."""

        pane: "CatalogPane"
        action: str
        row: CatalogRow

        @property
        def control(self) -> "CatalogPane":
            return self.pane

    def __init__(self, *, id: str | None = None, classes: str | None = None, clock: Callable[[], float] = time.time) -> None:
        super().__init__(id=id, classes=classes)
        self.rows: list[CatalogRow] = []
        self.pruned: list[CatalogRow] = []
        self.shown: list[CatalogRow] = []
        self.clock = clock
        self.columns: list[tuple[str, str, int]] = []
        self.new_names: dict[str, int | None] = {}
        """Tools marked new -> their calls when first listed (a call since, by anyone, is a use)."""
        self._table = CatalogTable(id="catalog-table", cursor_type="row", zebra_stripes=True)
        self.filter_box = CatalogFilter(placeholder="filter: words, status:broken, is:recipe  (/ here, esc clears)", id="catalog-filter", compact=True)

    def mark_new(self, names: tuple[str, ...] | list[str]) -> None:
        """Mark tools as new (from a pull, another program) until the person views them or they are used."""
        if not names:  # the usual open: no table to redo (and lay out again) while the first request is on its way
            return
        calls = {row.name: row.calls for row in self.rows if row.kind == "tool"}
        for name in names:
            self.new_names.setdefault(name, calls.get(name))
        self.set_rows(self.rows)

    def unmark(self, name: str) -> None:
        if self.new_names.pop(name, False) is not False:
            self._render_rows()

    def _forget_used(self) -> None:
        for row in self.rows:
            if row.kind == "tool" and row.name in self.new_names:
                before = self.new_names[row.name]
                if before is None:
                    self.new_names[row.name] = row.calls
                elif row.calls > before:
                    del self.new_names[row.name]

    def compose(self) -> ComposeResult:
        yield Static("", id="catalog-title", classes="pane-title")
        # mounted just after the first frame (the pane's frame and title are in it): the empty table and the filter
        # were a tenth of that frame; the rows come when the project has opened anyway
        yield Lazy(self.filter_box)
        yield Lazy(self._table)

    def on_resize(self) -> None:
        self._fit_columns()

    def _fit_columns(self) -> None:
        """Columns for the table's width now (re-laid out when it changed: a resize, a narrow/wide layout switch)."""
        table = self.table
        if not table.is_mounted:
            return
        width = table.scrollable_content_region.width
        longest = max((len(row.name) + (3 if row.kind != "tool" else 0) + (len(NEW_MARK) if row.name in self.new_names else 0)
                       for row in [*self.rows, *self.pruned]), default=22)
        columns = fit_columns(width if width > 0 else 80, longest)
        if columns == self.columns:
            return
        self.columns = columns
        table.clear(columns=True)
        for key, label, size in columns:
            table.add_column(label, key=key, width=size)
        self._render_rows()

    @property
    def table(self) -> CatalogTable:
        return self._table

    def set_rows(self, rows: list[CatalogRow]) -> None:
        """Replace the rows (after any catalog change); keeps the selection on the same tool."""
        self.rows = list(rows)
        self._forget_used()
        if self.is_mounted:
            self._fit_columns()
        self._render_rows()

    def set_pruned(self, names: list[str], usage: dict[str, tuple[int, float | None]] | None = None) -> None:
        """The pruned tools git can restore (shown instead of the catalog while `show_pruned`), with the calls and
        last use they had (`usage`: name -> (calls, last used))."""
        usage = usage or {}
        self.pruned = [CatalogRow(name, "tool", "pruned", *usage.get(name, (0, None)), "pruned: enter or r restores it (a new commit)")
                       for name in names]
        if self.show_pruned:
            self._render_rows()

    def selected(self) -> CatalogRow | None:
        table = self.table
        if not self.shown or table.cursor_row < 0 or table.cursor_row >= len(self.shown):
            return None
        return self.shown[table.cursor_row]

    def select(self, name: str) -> bool:
        for index, row in enumerate(self.shown):
            if row.name == name:
                self.table.move_cursor(row=index)
                return True
        return False

    def _render_rows(self) -> None:
        if not self.is_mounted or not self._table.is_mounted:  # the table renders the rows it finds when it mounts
            return
        table = self.table
        previous = self.selected()
        source = self.pruned if self.show_pruned else self.rows
        self.shown = sort_rows(filter_rows(source, self.filter_text), self.sort_key, reverse=self.sort_reverse)
        now = self.clock()
        table.clear()
        keys = [key for key, _label, _size in self.columns]
        table.add_rows([cells[key] for key in keys] for cells in (self._cells(row, now, self._is_new(row)) for row in self.shown))
        if previous is not None:
            self.select(previous.name)
        counts = {status: sum(1 for row in self.rows if row.status == status) for status in ("broken", "drifted", "unused")}
        title = Text()
        title.append("Catalog ", style="bold")
        tools = sum(1 for row in self.rows if row.kind == "tool")
        mcp = sum(1 for row in self.rows if row.kind == "mcp")
        if self.show_pruned:  # the catalog's own counts are not what this view lists: they would push its keys off a narrow pane
            title.append(f"{len(self.pruned)} pruned tools (enter/r restores, p back)", style="italic #c678dd")
        else:
            title.append(f"{tools} tools, {len(self.rows) - tools - mcp} recipes" + (f", {mcp} mcp" if mcp else ""), style="dim")
            for status, count in counts.items():
                if count:
                    title.append(f"  {count} {status}", style=STATUS_STYLES[status])
            if fresh := sum(1 for row in self.rows if self._is_new(row)):
                title.append(f"  {fresh} new", style=NEW_STYLE)
        arrow = "↓" if not self.sort_reverse else "↑"
        title.append(f"   sort: {self.sort_key} {arrow} (s)", style="dim")
        if self.filter_text:
            title.append(f"   {len(self.shown)} shown (filter: {self.filter_text}; / then esc clears)", style="bold #e5c07b")
        self.query_one("#catalog-title", Static).update(title)

    def _is_new(self, row: CatalogRow) -> bool:
        return row.kind == "tool" and row.status != "pruned" and row.name in self.new_names

    @staticmethod
    def _cells(row: CatalogRow, now: float, new: bool = False) -> dict[str, Text]:
        name = Text(row.name + {"recipe": "  ⚙", "mcp": "  ⇄"}.get(row.kind, ""), style="bold" if row.kind == "tool" else "italic")
        if new:
            name.append(NEW_MARK, style=NEW_STYLE)
        return {
            "status": Text(row.status, style=STATUS_STYLES.get(row.status, "")),
            "name": name,
            "access": ACCESS_MARKERS.get(row.access, Text(row.access)).copy(),
            "calls": Text(str(row.calls), justify="right"),
            "last_used": Text(format_last_used(row.last_used, now), style="dim"),
            "summary": Text(row.summary, style="red" if row.status == "broken" else "", overflow="ellipsis", no_wrap=True),
        }

    def on_mount(self) -> None:
        self._fit_columns()

    def watch_sort_key(self) -> None:
        self._render_rows()

    def watch_sort_reverse(self) -> None:
        self._render_rows()

    def watch_filter_text(self) -> None:
        self._render_rows()

    def watch_show_pruned(self, showing: bool) -> None:
        self._render_rows()
        if showing:
            self.post_message(self.PrunedRequested(self))

    @dataclass
    class PrunedRequested(Message):
        """The pruned view opened: the app should load the list (`set_pruned`)."""

        pane: "CatalogPane"

    @dataclass
    class CareRequested(Message):
        """The person asked for the care view (suggested tools, doctor findings)."""

        pane: "CatalogPane"

    def action_care(self) -> None:
        self.post_message(self.CareRequested(self))

    def action_toggle_pruned(self) -> None:
        self.show_pruned = not self.show_pruned

    @on(Input.Changed, "#catalog-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.filter_text = event.value

    @on(Input.Submitted, "#catalog-filter")
    def _filter_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.table.focus()

    @on(DataTable.HeaderSelected)
    def _header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        key = str(event.column_key.value)
        if key in SORT_KEYS:
            if key == self.sort_key:
                self.sort_reverse = not self.sort_reverse
            else:
                self.sort_key = key

    @on(DataTable.RowSelected)
    def _row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        self.action_request("view")

    def action_request(self, action: str) -> None:
        row = self.selected()
        if row is None:
            self.notify("no pruned tool to restore" if self.show_pruned else "no tool selected", severity="warning")
            return
        if row.status == "pruned":
            if action not in ("view", "run", "restore"):
                self.notify(f"{row.name} is pruned: enter or r restores it", severity="warning")
                return
            action = "restore"
        self.unmark(row.name)  # looked at or used: no longer news
        self.post_message(self.ActionRequested(self, action, row))

    def action_cycle_sort(self) -> None:
        self.sort_key = SORT_KEYS[(SORT_KEYS.index(self.sort_key) + 1) % len(SORT_KEYS)]

    def set_filter(self, text: str) -> None:
        """Filter the rows as if `text` were typed in the filter box (/tools ARGS)."""
        self.query_one("#catalog-filter", Input).value = text

    def action_focus_filter(self) -> None:
        self.screen.set_focus(self.filter_box)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "request" and self.filter_box.has_focus:
            return False
        return True
