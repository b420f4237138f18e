"""The catalog pane's keys as app actions: view, run, prune, revert, history and drift, through the core catalog."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from textual import work

from tui_agent.core.catalog.errors import failure_reason
from tui_agent.core.versioning.store import VersionedStore
from tui_agent.ui.catalog_care import open_catalog_care, repair_tool, suggestion_action
from tui_agent.ui.catalog_rows import CatalogRow
from tui_agent.ui.diffs import highlighted_source
from tui_agent.ui.screens.argument_form import ArgumentFormScreen
from tui_agent.ui.screens.confirm import ConfirmScreen
from tui_agent.ui.screens.pickers import Choice, ChoiceScreen
from tui_agent.ui.screens.source import SourceScreen
from tui_agent.ui.widgets.catalog_pane import CatalogPane
from tui_agent.ui.widgets.messages import Entry

if TYPE_CHECKING:
    from tui_agent.ui.app import TuiAgentApp

CATALOG_ACTIONS = ("view", "run", "prune", "revert", "revert_to", "history", "drift", "restore", "repair")


def run_result_text(run: Any) -> tuple[str, bool]:
    """What a manual run shows: the value (or the error) and the captured output."""
    if getattr(run, "ok", False):
        value = run.value
        text = value if isinstance(value, str) and getattr(run, "value_is_repr", False) else json.dumps(value, indent=2, ensure_ascii=False, default=str)
    else:
        text = f"{run.error_kind or 'error'}: {run.error}"
    if getattr(run, "stdout", ""):
        text += f"\n--- stdout\n{run.stdout}"
    if getattr(run, "stderr", ""):
        text += f"\n--- stderr\n{run.stderr}"
    if getattr(run, "output_truncated", False):
        text += "\n(output truncated)"
    return text, not getattr(run, "ok", False)


def run_confirmation(name: str, writes: bool, network: bool, arguments: dict[str, Any]) -> ConfirmScreen:
    """The question before a manual run of a tool that declares WRITES = True and/or NETWORK = True."""
    powers = [power for power, declared in (("change project files (WRITES = True)", writes), ("use the network (NETWORK = True)", network)) if declared]
    question = f"Run [b]{name}[/b]? It may {' and '.join(powers)}.\nWith these arguments:"
    detail = highlighted_source(json.dumps(arguments, indent=2, ensure_ascii=False, default=str), "json", line_numbers=False)
    return ConfirmScreen(question, yes="Run", no="Cancel", detail=detail)


def drift_tests_text(row: CatalogRow, tests_pass: bool | None) -> str:
    """What the drift re-run of the tests says; for a broken tool it re-ran its last good version, not the file on disk."""
    outcome = {True: "pass", False: "FAIL", None: "none"}[tests_pass]
    if row.status == "broken":
        return f"the file is broken ({row.error or 'see v'}); the last good version's tests: {outcome}"
    return {True: "its tests pass", False: "its tests FAIL", None: "no tests"}[tests_pass]


class CatalogActionsMixin:
    """Each action calls the row's versioned store (`runtime.store(kind)`): the same verbs for tools and recipes."""

    def on_catalog_pane_action_requested(self: "TuiAgentApp", message: CatalogPane.ActionRequested) -> None:
        self.catalog_action(message.action, message.row)

    def on_catalog_pane_care_requested(self: "TuiAgentApp", message: CatalogPane.CareRequested) -> None:
        self.run_worker(open_catalog_care(self), group="catalog-care", exclusive=True)

    async def catalog_repair(self: "TuiAgentApp", row: CatalogRow) -> None:
        if row.kind != "tool":
            self.notify("repair hands a drifted or broken tool to the agent; recipes are fixed by editing them",
                        severity="warning")
            return
        await repair_tool(self, row.name)

    def on_catalog_pane_pruned_requested(self: "TuiAgentApp", message: CatalogPane.PrunedRequested) -> None:
        self.load_pruned()

    @work(group="catalog-pruned", exclusive=True)
    async def load_pruned(self: "TuiAgentApp") -> None:
        """The pruned tools git history can restore, into the catalog pane's pruned view."""
        catalog = getattr(self.runtime, "catalog", None)
        if catalog is None:
            self.notify("the catalog is still opening", severity="warning")
            return
        try:
            names = await asyncio.to_thread(catalog.pruned)
        except Exception as exc:
            self.notify(f"could not list pruned tools: {exc}", severity="error")
            return
        self.catalog_pane.set_pruned(names)

    def store_for(self: "TuiAgentApp", row: CatalogRow) -> VersionedStore:
        """The versioned store of the row's kind: the same verbs for tools and recipes (catalog_action checked it)."""
        store = self.runtime.store(row.kind)
        assert store is not None
        return store

    @work(group="catalog-action")
    async def catalog_action(self: "TuiAgentApp", action: str, row: CatalogRow) -> None:
        """Run one catalog action in a worker; errors become notifications, never crashes."""
        if row.kind == "suggestion":
            await suggestion_action(self, action, row.name)
            return
        if row.kind == "mcp":
            detail = f": {row.error}" if row.error else ""
            self.notify(f"{row.name} comes from an MCP server ({row.status}{detail}); {action} applies to catalog tools "
                        "and recipes. The agent calls MCP tools, and run_python imports them.", severity="warning", timeout=8)
            return
        if self.runtime is None or self.runtime.store(row.kind) is None:
            self.notify("the catalog is still opening", severity="warning")
            return
        if action not in CATALOG_ACTIONS:
            self.notify(f"unknown catalog action {action}", severity="error")
            return
        try:
            await getattr(self, f"catalog_{action}")(row)
        except Exception as exc:
            message = getattr(exc, "message", None) or failure_reason(exc)
            stage = getattr(exc, "stage", None)
            self.notify(f"{action} {row.name}: {f'[{stage}] ' if stage else ''}{message}", severity="error", timeout=8)
        self.schedule_catalog_refresh()

    async def catalog_view(self: "TuiAgentApp", row: CatalogRow) -> None:
        source = self.store_for(row).source(row.name)
        if source is None:
            self.notify(f"no source for {row.name}", severity="error")
            return
        title = f"{row.name}  ({row.status})" + (f"  — {row.error}" if row.error else "")
        await self.ask(SourceScreen(title, source, lexer="python" if row.kind == "tool" else "toml"))

    async def catalog_run(self: "TuiAgentApp", row: CatalogRow) -> None:
        if row.kind == "recipe":
            runs = await self.runtime.recipes.run_recipe(row.name)
            for run in runs:
                await self.add_notice(f"recipe {row.name}: {run.summary}", "info" if run.ok else "error")
            return
        record = self.runtime.catalog.get(row.name)
        if record is None or record.spec is None:
            self.notify(f"{row.name} has no working version to run", severity="error")
            return
        arguments = await self.ask(ArgumentFormScreen(row.name, record.spec.input_schema, description=record.spec.description.strip().splitlines()[0] if record.spec.description.strip() else ""))
        if arguments is None:
            return
        spec = record.spec
        if (spec.writes or spec.network) and not await self.ask(run_confirmation(row.name, spec.writes, spec.network, arguments)):
            self.notify(f"{row.name}: not run")
            return
        entry = Entry("tool", call_id=f"manual-{self.catalog_refreshes}-{row.name}", tool=row.name, arguments=arguments)
        block = await self.conversation.add(entry)
        run = await self.runtime.catalog.call_tool(row.name, arguments, allow_writes=spec.writes, allow_network=spec.network)
        entry.result, entry.is_error = run_result_text(run)
        entry.duration_ms = run.duration_ms
        block.collapsed = False  # type: ignore[attr-defined]
        block.refresh_entry()  # type: ignore[attr-defined]
        self.conversation.refresh(layout=True)  # repaint the whole pane: no stale line left where the block grew
        where = " (F2 shows the output)" if self.screen.has_class("-narrow") else ""
        self.notify(f"{row.name}: {'ok' if run.ok else 'failed'} in {run.duration_ms:.0f} ms{where}", severity="information" if run.ok else "error")

    async def catalog_prune(self: "TuiAgentApp", row: CatalogRow) -> None:
        calls = f"It was called {row.calls} time(s)." if row.calls else "It was never called."
        question = f"Prune {row.kind} [b]{row.name}[/b]?\n{calls} The file is deleted in a new commit; `restore` brings it back."
        if not await self.ask(ConfirmScreen(question, yes="Prune", no="Keep")):
            return
        change = await self.store_for(row).prune(row.name)
        self.notify(f"pruned {row.name}" + change.note)

    async def catalog_revert(self: "TuiAgentApp", row: CatalogRow) -> None:
        store = self.store_for(row)
        change = await store.revert(row.name)
        self.notify(f"reverted {row.name} to its previous version" + change.note)
        try:
            self.diff_pane.show(f"{row.name}: reverted (the revert's changes)", store.diff(row.name), subject=row.name)
        except Exception:  # the revert is done; only its diff could not be shown
            pass

    async def catalog_restore(self: "TuiAgentApp", row: CatalogRow) -> None:
        change = await self.store_for(row).restore(row.name)
        self.notify(f"restored {row.name}" + change.note)
        if self.catalog_pane.show_pruned:
            self.load_pruned()

    async def catalog_revert_to(self: "TuiAgentApp", row: CatalogRow) -> None:
        """U: pick a version from the history list, see its diff, and revert to it (a new commit)."""
        store = self.store_for(row)
        choices = [
            Choice(entry.rev, f"{entry.rev[:8]}  {str(entry.date)[:16].replace('T', ' ')}  {entry.message}")
            for entry in store.history(row.name) if not entry.deleted
        ][1:]  # the newest commit is the current version
        rev = await self.ask(ChoiceScreen(f"Revert {row.name} to which version?", choices, empty="no earlier version in git"))
        if rev is None:
            return
        self.diff_pane.show(f"{row.name}: {rev[:8]} → current (the revert goes back to the left side)", store.diff(row.name, rev), subject=row.name)
        question = f"Revert {row.kind} [b]{row.name}[/b] to {rev[:8]}?\nThe diff pane shows that version against the current file. The revert is a new commit."
        if not await self.ask(ConfirmScreen(question, yes="Revert", no="Keep")):
            return
        change = await store.revert(row.name, rev)
        self.notify(f"reverted {row.name} to {rev[:8]}" + change.note)

    async def catalog_history(self: "TuiAgentApp", row: CatalogRow) -> None:
        store = self.store_for(row)
        history = store.history(row.name)
        choices = [
            Choice(entry.rev, f"{entry.rev[:8]}  {str(entry.date)[:16].replace('T', ' ')}  {entry.message}{'  (deleted)' if entry.deleted else ''}")
            for entry in history
        ]
        rev = await self.ask(ChoiceScreen(f"History of {row.name}: pick a version to diff against the current file", choices, empty="no history in git"))
        if rev is None:
            return
        self.diff_pane.show(f"{row.name}: {rev[:8]} → current", store.diff(row.name, rev), subject=row.name)
        self.reveal_diff()

    async def catalog_drift(self: "TuiAgentApp", row: CatalogRow) -> None:
        if row.kind == "recipe":
            self.notify("drift applies to tools", severity="warning")
            return
        reports = await self.runtime.catalog.drift(row.name)
        report = reports[0] if reports else None
        if report is None:
            self.notify(f"no drift report for {row.name}")
            return
        tests = drift_tests_text(row, report.tests_pass)
        since = (report.since_commit or "?")[:8]
        if not report.changed_files:
            self.notify(f"{row.name}: no drift since {since} ({len(report.watched_files)} watched files; {tests})")
            self.diff_pane.show(f"{row.name}: no drift since {since}; {tests}", "", subject=row.name)
            return
        title = f"{row.name} drifted since {since}: {', '.join(report.changed_files)}; {tests}"
        self.diff_pane.show(title, report.diff, subject=row.name)
        self.reveal_diff()

    def reveal_diff(self: "TuiAgentApp") -> None:
        """In the narrow layout the diff pane is a tab: switch to it."""
        if self.screen.has_class("-narrow"):
            self.action_show_pane("diff")
