"""The catalog pane's keys as app actions: view, run, prune, revert, history and drift, through the core catalog."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from textual.worker import WorkerCancelled

from tui_agent.ui.catalog_rows import CatalogRow
from tui_agent.ui.diffs import highlighted_source
from tui_agent.ui.screens.argument_form import ArgumentFormScreen
from tui_agent.ui.screens.confirm import ConfirmScreen
from tui_agent.ui.screens.pickers import Choice, ChoiceScreen
from tui_agent.ui.screens.source import SourceScreen
from tui_agent.ui.widgets.messages import Entry
from tui_agent.core.hostnames import Grant, describe_grant
from tui_agent.core.runtime_state import Restricted, catalog_of, recipes_of, unavailable
from tui_agent.core.errors import PROJECT_FAILURES, PROJECT_STATE_FAILURES

if TYPE_CHECKING:
    from tui_agent.core.versioning.store_interface import VersionedStore
    from tui_agent.core.sandbox import RunResult
    from tui_agent.ui.host import ConversationView, RunStoppable, UIHost
    from tui_agent.ui.widgets.catalog_pane import CatalogPane

CatalogAction = Callable[[CatalogRow], Awaitable[None]]
STOPPED_RUN = "cancelled: you stopped the run"


def run_result_text(run: RunResult) -> tuple[str, bool]:
    """What a manual run shows: the value (or the error) and the captured output."""
    if run.ok:
        value = run.value
        text = value if isinstance(value, str) and run.value_is_repr else json.dumps(value, indent=2, ensure_ascii=False, default=str)
    else:
        text = f"{run.error_kind or 'error'}: {run.error}"
    if run.stdout:
        text += f"\n--- stdout\n{run.stdout}"
    if run.stderr:
        text += f"\n--- stderr\n{run.stderr}"
    if run.output_truncated:
        text += "\n(output truncated)"
    return text, not run.ok


def action_failure(action: str, name: str, exc: Exception) -> str:
    """The notification of a failed catalog action: a PipelineError's stage in brackets, then its message."""
    from tui_agent.core.catalog.errors import PipelineError, failure_reason  # the core: not on the first frame's path

    if isinstance(exc, PipelineError):
        return f"{action} {name}: [{exc.stage}] {exc.message}"
    return f"{action} {name}: {failure_reason(exc)}"


def run_confirmation(name: str, writes: bool, network: Grant, arguments: dict[str, Any]) -> ConfirmScreen:
    """The question before a manual run of a tool that declares WRITES = True and/or NETWORK (True or names)."""
    reach = f"use the network ({describe_grant(network)}: NETWORK)"
    powers = [power for power, declared in (("change project files (WRITES = True)", writes), (reach, network)) if declared]
    question = f"Run [b]{name}[/b]? It may {' and '.join(powers)}.\nWith these arguments:"
    detail = highlighted_source(json.dumps(arguments, indent=2, ensure_ascii=False, default=str), "json", line_numbers=False)
    return ConfirmScreen(question, yes="Run", no="Cancel", detail=detail)


def drift_tests_text(row: CatalogRow, tests_pass: bool | None) -> str:
    """What the drift re-run of the tests says; for a broken tool it re-ran its last good version, not the file on disk."""
    outcome = {True: "pass", False: "FAIL", None: "none"}[tests_pass]
    if row.status == "broken":
        return f"the file is broken ({row.error or 'see v'}); the last good version's tests: {outcome}"
    return {True: "its tests pass", False: "its tests FAIL", None: "no tests"}[tests_pass]


class CatalogActions:
    """The catalog pane's actions: each calls the row's versioned store (`runtime.store(kind)`), the same verbs for
    tools and recipes."""

    def __init__(self, host: UIHost, *, submit_prompt: Callable[[str], Awaitable[None]], pane: Callable[[], CatalogPane],
                 conversation_view: Callable[[], ConversationView], run_stoppable: RunStoppable) -> None:
        self.host = host
        self.run_stoppable = run_stoppable
        """Runs a tool the person started from the catalog in the turn's place, so Esc stops it."""
        self.pane = pane
        self.conversation_view = conversation_view
        """The conversation, where a tool run from the catalog shows its block."""
        self.submit_prompt = submit_prompt
        """Hands the agent a prompt (repair, a suggestion to author): now, or after the running turn."""

    async def repair(self, row: CatalogRow) -> None:
        if row.kind != "tool":
            self.host.notify("repair hands a drifted or broken tool to the agent; recipes are fixed by editing them",
                        severity="warning")
            return
        from tui_agent.ui.catalog_care import repair_tool  # the tending modules: not on the first frame's path

        await repair_tool(self.host, self.submit_prompt, row.name)

    def load_pruned(self) -> None:
        """The pruned tools git history can restore, into the catalog pane's pruned view (in a worker)."""
        self.host.run_worker(self._load_pruned(), group="catalog-pruned", exclusive=True)

    async def _load_pruned(self) -> None:
        catalog = catalog_of(self.host.state)
        if catalog is None:
            self.host.notify("the catalog is still opening", severity="warning")
            return
        try:
            names = await asyncio.to_thread(catalog.pruned)
            usage = await asyncio.to_thread(catalog.state.usage)  # the calls made before the prune
        except PROJECT_STATE_FAILURES as exc:
            self.host.notify(f"could not list pruned tools: {exc}", severity="error")
            return
        self.pane().set_pruned(names, {name: (stats.calls, stats.last_used) for name, stats in usage.items()})

    def store_for(self, row: CatalogRow) -> VersionedStore:
        """The versioned store of the row's kind: the same verbs for tools and recipes (`request` checked it)."""
        store = self.host.runtime.store(row.kind) if self.host.runtime is not None else None
        assert store is not None
        return store

    def actions(self) -> dict[str, CatalogAction]:
        """The catalog pane's actions by name (its keys, the command palette, catalog care)."""
        return {
            "view": self.view, "run": self.run, "prune": self.prune, "revert": self.revert,
            "revert_to": self.revert_to, "history": self.history, "drift": self.drift,
            "accept_drift": self.accept_drift, "restore": self.restore, "repair": self.repair,
        }

    def request(self, action: str, row: CatalogRow) -> None:
        """Run one catalog action on `row` in a worker; errors become notifications, never crashes."""
        self.host.run_worker(self._request(action, row), group="catalog-action")

    async def _request(self, action: str, row: CatalogRow) -> None:
        if row.kind == "suggestion":
            from tui_agent.ui.catalog_care import suggestion_action

            await suggestion_action(self.host, self, action, row.name)
            return
        if row.kind == "mcp":
            detail = f": {row.error}" if row.error else ""
            self.host.notify(f"{row.name} comes from an MCP server ({row.status}{detail}); {action} applies to catalog tools "
                        "and recipes. The agent calls MCP tools, and run_python imports them.", severity="warning", timeout=8)
            return
        if self.host.runtime is None or self.host.runtime.store(row.kind) is None:
            self.host.notify("the catalog is still opening", severity="warning")
            return
        handler = self.actions().get(action)
        if handler is None:
            self.host.notify(f"unknown catalog action {action}", severity="error")
            return
        try:
            await handler(row)
        except Exception as exc:  # edge: any action (run, edit, prune, revert) may fail any way; the pane says so
            self.host.notify(action_failure(action, row.name, exc), severity="error", timeout=8)
        self.host.schedule_catalog_refresh()

    async def view(self, row: CatalogRow) -> None:
        source = self.store_for(row).source(row.name)
        if source is None:
            self.host.notify(f"no source for {row.name}", severity="error")
            return
        title = f"{row.name}  ({row.status})" + (f"  — {row.error}" if row.error else "")
        await self.host.ask(SourceScreen(title, source, lexer="python" if row.kind == "tool" else "toml"))

    async def run(self, row: CatalogRow) -> None:
        state = self.host.state
        if isinstance(state, Restricted):
            self.host.notify(unavailable(state, f"running {row.name}"), severity="warning", timeout=8)
            return
        recipes = recipes_of(state)
        if row.kind == "recipe" and recipes is not None:
            runs = await recipes.run_recipe(row.name)
            for recipe_run in runs:
                await self.host.add_notice(f"recipe {row.name}: {recipe_run.summary}", "info" if recipe_run.ok else "error")
            return
        catalog = catalog_of(state) if row.kind == "tool" else None
        record = catalog.get(row.name) if catalog is not None else None
        if catalog is None or record is None or record.spec is None:
            self.host.notify(f"{row.name} has no working version to run", severity="error")
            return
        arguments = await self.host.ask(ArgumentFormScreen(row.name, record.spec.input_schema, description=record.spec.description.strip().splitlines()[0] if record.spec.description.strip() else ""))
        if arguments is None:
            return
        spec = record.spec
        if (spec.writes or spec.network) and not await self.host.ask(run_confirmation(row.name, spec.writes, spec.network, arguments)):
            self.host.notify(f"{row.name}: not run")
            return
        entry = Entry("tool", call_id=f"manual-{uuid.uuid4().hex[:12]}-{row.name}", tool=row.name, arguments=arguments)
        conversation = self.conversation_view()  # a manual run shows as a tool block, as the agent's calls do
        await conversation.add(entry)
        started = time.monotonic()
        try:
            run = await self.run_stoppable(catalog.call_tool(row.name, arguments, allow_writes=spec.writes,
                                                             allow_network=bool(spec.network)))
        except WorkerCancelled:
            entry.result, entry.is_error, entry.cancelled = STOPPED_RUN, True, True
            entry.duration_ms = (time.monotonic() - started) * 1000
            conversation.show_result(entry)
            self.host.notify(f"{row.name}: stopped", severity="warning")
            return
        entry.result, entry.is_error = run_result_text(run)
        entry.duration_ms = run.duration_ms
        conversation.show_result(entry)
        where = " (F2 shows the output)" if self.host.narrow else ""
        self.host.notify(f"{row.name}: {'ok' if run.ok else 'failed'} in {run.duration_ms:.0f} ms{where}", severity="information" if run.ok else "error")

    async def prune(self, row: CatalogRow) -> None:
        calls = f"It was called {row.calls} time(s)." if row.calls else "It was never called."
        question = f"Prune {row.kind} [b]{row.name}[/b]?\n{calls} The file is deleted in a new commit; `restore` brings it back."
        if not await self.host.ask(ConfirmScreen(question, yes="Prune", no="Keep")):
            return
        change = await self.store_for(row).prune(row.name)
        self.host.notify(f"pruned {row.name}" + change.note)

    async def revert(self, row: CatalogRow) -> None:
        """u: name the version the revert goes back to, show its diff against the current file, and ask (as U and d do)."""
        store = self.store_for(row)
        versions = [entry for entry in store.history(row.name) if not entry.deleted]
        if len(versions) < 2:
            self.host.notify(self.no_earlier_version(row.name), severity="warning")
            return
        previous = versions[1]
        self.host.show_diff(f"{row.name}: {previous.rev[:8]} → current (the revert goes back to the left side)",
                                store.diff(row.name, previous.rev), subject=row.name)
        question = (f"Revert {row.kind} [b]{escape(row.name)}[/b] to its previous version {previous.rev[:8]} "
                    f"({escape(previous.message)})?\nThe diff pane shows that version against the current file. The revert is a new commit.")
        if not await self.host.ask(ConfirmScreen(question, yes="Revert", no="Keep")):
            return
        change = await store.revert(row.name, previous.rev)
        self.host.notify(f"reverted {row.name} to its previous version" + change.note)
        try:
            diff = store.diff(row.name)
        except PROJECT_FAILURES:  # the revert is done; only its diff could not be shown
            return
        self.host.show_diff(f"{row.name}: reverted (the revert's changes)", diff, subject=row.name)

    def no_earlier_version(self, name: str) -> str:
        """Why there is nothing to revert to: in a shallow clone, that the clone is shallow and how to fetch the rest."""
        catalog = catalog_of(self.host.state)
        shallow = catalog.git.shallow_note() if catalog is not None else None
        return f"{name} has no earlier version in this clone to revert to: {shallow}" if shallow else f"{name} has no earlier version in git to revert to"

    async def restore(self, row: CatalogRow) -> None:
        change = await self.store_for(row).restore(row.name)
        self.host.notify(f"restored {row.name}" + change.note)
        pane = self.pane()
        pane.show_pruned = False  # back to the catalog, on the tool just restored
        self.host.schedule_catalog_refresh(select=row.name)

    async def revert_to(self, row: CatalogRow) -> None:
        """U: pick a version from the history list, see its diff, and revert to it (a new commit)."""
        store = self.store_for(row)
        choices = [
            Choice(entry.rev, f"{entry.rev[:8]}  {str(entry.date)[:16].replace('T', ' ')}  {entry.author}  {entry.message}")
            for entry in store.history(row.name) if not entry.deleted
        ][1:]  # the newest commit is the current version
        rev = await self.host.ask(ChoiceScreen(f"Revert {row.name} to which version?", choices, empty=self.no_earlier_version(row.name)))
        if rev is None:
            return
        self.host.show_diff(f"{row.name}: {rev[:8]} → current (the revert goes back to the left side)", store.diff(row.name, rev), subject=row.name)
        question = f"Revert {row.kind} [b]{row.name}[/b] to {rev[:8]}?\nThe diff pane shows that version against the current file. The revert is a new commit."
        if not await self.host.ask(ConfirmScreen(question, yes="Revert", no="Keep")):
            return
        change = await store.revert(row.name, rev)
        self.host.notify(f"reverted {row.name} to {rev[:8]}" + change.note)

    async def history(self, row: CatalogRow) -> None:
        store = self.store_for(row)
        history = store.history(row.name)
        choices = [
            Choice(entry.rev, f"{entry.rev[:8]}  {str(entry.date)[:16].replace('T', ' ')}  {entry.author}  {entry.message}"
                              f"{'  (deleted)' if entry.deleted else ''}")
            for entry in history
        ]
        rev = await self.host.ask(ChoiceScreen(f"History of {row.name}: pick a version to diff against the current file", choices, empty="no history in git"))
        if rev is None:
            return
        self.host.show_diff(f"{row.name}: {rev[:8]} → current", store.diff(row.name, rev), subject=row.name)
        self.host.reveal_diff()

    async def drift(self, row: CatalogRow) -> None:
        if row.kind == "recipe":
            self.host.notify("drift applies to tools", severity="warning")
            return
        catalog = catalog_of(self.host.state)
        if catalog is None:
            self.host.notify("the tool catalog is not open", severity="warning")
            return
        reports = await catalog.drift(row.name)
        report = reports[0] if reports else None
        if report is None:
            self.host.notify(f"no drift report for {row.name}")
            return
        tests = drift_tests_text(row, report.tests_pass)
        since = (report.since_commit or "?")[:8]
        if not report.changed_files:
            self.host.notify(f"{row.name}: no drift since {since} ({len(report.watched_files)} watched files; {tests})")
            self.host.show_diff(f"{row.name}: no drift since {since}; {tests}", "", subject=row.name)
            return
        title = f"{row.name} drifted since {since}: {', '.join(report.changed_files)}; {tests}"
        self.host.show_diff(title, report.diff, subject=row.name)
        self.host.reveal_diff()

    async def accept_drift(self, row: CatalogRow) -> None:
        """A: show the drift, say what accepting does and ask; then mark the tool reviewed at the current commit."""
        catalog = catalog_of(self.host.state) if row.kind == "tool" else None
        if catalog is None:
            self.host.notify("accepting drift applies to the tools of an open catalog", severity="warning")
            return
        if not row.status.startswith("drifted"):
            self.host.notify(f"{row.name} has not drifted ({row.status}): nothing to accept", severity="warning")
            return
        reports = await catalog.drift(row.name)
        report = reports[0] if reports else None
        files = ", ".join(report.changed_files) if report is not None and report.changed_files else "its dependency files"
        if report is not None:
            self.host.show_diff(f"{row.name} drifted: {files}; {drift_tests_text(row, report.tests_pass)}",
                                    report.diff, subject=row.name)
            self.host.reveal_diff()
        question = (f"Accept the drift of tool [b]{escape(row.name)}[/b]?\n{escape(files)} as they are now become the "
                    "reference its drift is measured from: the tool is marked reviewed at the current commit (a new "
                    "commit of .agent/drift-reviews.json). The diff pane shows what changed.")
        if not await self.host.ask(ConfirmScreen(question, yes="Accept", no="Keep drifted")):
            return
        change = await catalog.accept_drift(row.name)
        self.host.notify(f"accepted the drift of {row.name}" + change.note)
        # the drift the pane showed is the reference now: no diff is left to show
        self.host.show_diff(f"{row.name}: drift accepted (its dependency files as they are now are its reference)",
                            "", subject=row.name)
