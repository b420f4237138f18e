"""RecipeEngine: fires recipes on their triggers, runs their actions (tool calls or agent prompts), reports and audits the results."""

from __future__ import annotations

import asyncio
import itertools
import json
import sqlite3
import time
from collections.abc import Callable, Iterable
from functools import partial
from typing import TYPE_CHECKING, Any

from tui_agent.core.agent.permissions import ApprovalRequest
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.changes import ChangeEvent, ChangeFeed
from tui_agent.core.events import CHANGE_EVENTS, CatalogChanged, Event, Notice, ToolAuthored, ToolCallFinished, ToolCallStarted
from tui_agent.core.listeners import tell
from tui_agent.core.project import Project
from tui_agent.core.recipes.book import RecipeBook
from tui_agent.core.recipes.dispatch import Dispatcher, Job
from tui_agent.core.globs import matches
from tui_agent.core.recipes.loopguard import LoopGuard
from tui_agent.core.recipes.model import Recipe, RecipeRecord, RecipeRun
from tui_agent.core.recipes.placeholders import fill_text, fill_value, uses
from tui_agent.core.recipes.reload import reload_recipe_files
from tui_agent.core.recipes.runlog import RunLog
from tui_agent.core.recipes.seams import SubmitPrompt, ToolRunner, WriteApprover
from tui_agent.core.recipes.versioned_recipes import RecipeChange, RecipeStore
from tui_agent.core.watch import ProjectWatcher
from tui_agent.core.content import JsonObject

if TYPE_CHECKING:
    from tui_agent.core.versioning.gitqueries import HistoryEntry

EventListener = Callable[[Event], Any]
NOTICE_TEXT_LIMIT = 300
AUTHORED_REASONS = frozenset({"add", "update"})
"""`CatalogChanged.reason` values (before any `; commit note`) the catalog sends when save registered a version."""


def _short(text: str, limit: int = NOTICE_TEXT_LIMIT) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


class RecipeEngine:
    """One per runtime. Triggers: `files_changed` (debounced), `run_command` (slash commands), `session_started`,
    `tool_authored`; manual runs with `run_recipe`. Results go to listeners as core events and to the audit log."""

    def __init__(
        self,
        project: Project,
        book: RecipeBook,
        store: RecipeStore,
        catalog: ToolRunner,
        *,
        runlog: RunLog | None = None,
        submit_prompt: SubmitPrompt | None = None,
        guard: LoopGuard | None = None,
        permissions: WriteApprover | None = None,
        changes: ChangeFeed | None = None,
    ) -> None:
        self.project = project
        self.changes = changes or ChangeFeed()
        self._feed_listeners: dict[EventListener, Callable[[ChangeEvent], object]] = {}
        self.permissions = permissions  # approves WRITES tools (None: refused); the agent's own permission path
        self.book = book
        self.store = store
        self.catalog = catalog
        self.runlog = runlog or RunLog(project)
        self.submit_prompt = submit_prompt
        self.guard = guard or LoopGuard()
        self._listeners: list[EventListener] = []
        self._dispatcher = Dispatcher(self._run_job)
        self._call_ids = itertools.count(1)
        self._run_lock = asyncio.Lock()
        self._own_noticed: set[str] = set()
        self._statuses: dict[str, str] = {}
        self.watcher = ProjectWatcher(project, self.changes, on_recipes=self.reload_recipes, on_files=self.files_changed)
        self.refresh_stats()
        self.remember_statuses()

    # events ------------------------------------------------------------------
    def add_listener(self, listener: EventListener, *, changes: bool = True) -> None:
        """`listener` gets the engine's activity (its tool calls, notices) and, with `changes`, the recipe changes the
        engine publishes on the change feed (a front end that reads the feed itself passes changes=False)."""
        self._listeners.append(listener)
        if changes:
            def recipe_changes(event: ChangeEvent) -> None:
                if isinstance(event, (CatalogChanged, ToolAuthored)) and event.kind == "recipe":
                    listener(event)

            self._feed_listeners[listener] = recipe_changes
            self.changes.add_listener(recipe_changes)

    def remove_listener(self, listener: EventListener) -> None:
        if listener in self._listeners:
            self._listeners.remove(listener)
        feed_listener = self._feed_listeners.pop(listener, None)
        if feed_listener is not None:
            self.changes.remove_listener(feed_listener)

    def emit(self, event: Event) -> None:
        """Change events go to the project's change feed (the one place they are published), the rest to listeners."""
        if isinstance(event, CHANGE_EVENTS):
            self.changes.publish(event)
            return
        for listener in list(self._listeners):
            tell(partial(listener, event), "recipe event listener")  # a failing view must not stop recipes

    def handle_event(self, event: Event) -> None:
        """The catalog's listener. A tool added or updated through the pipeline (`save`: the agent's
        `create_tool`, or a person via the CLI) fires tool_authored recipes; any change re-checks which
        recipes are broken because of their required tools."""
        if not isinstance(event, CatalogChanged) or event.kind != "tool":
            return
        self.tools_changed()
        if event.reason.split(";")[0].strip() in AUTHORED_REASONS:
            for name in event.names:
                self.tool_authored(name)

    def tools_changed(self) -> None:
        """Required tools may have appeared, broken or gone: announce recipes whose status changed."""
        changed = self.remember_statuses()
        if changed:
            self.emit(CatalogChanged(tuple(changed), "recipe status changed (required tools)", "recipe"))

    def remember_statuses(self) -> list[str]:
        current: dict[str, str] = {record.name: record.status for record in self.book.records()}
        changed = sorted(name for name in set(current) | set(self._statuses) if current.get(name) != self._statuses.get(name))
        self._statuses = current
        return changed

    # the catalog side ----------------------------------------------------------
    def records(self) -> list[RecipeRecord]:
        return self.book.records()

    def get(self, name: str) -> RecipeRecord | None:
        return self.book.get(name)

    def refresh_stats(self) -> None:
        try:
            self.book.set_stats(self.runlog.stats())
        except (sqlite3.Error, OSError):  # a locked or damaged state.db only loses the counters
            pass

    def _changed(self, change: RecipeChange, name: str, reason: str) -> None:
        self.dispatcher_forget(name)
        self.remember_statuses()
        self.emit(CatalogChanged((name,), reason, "recipe"))
        if change.deferred_reason:
            self.emit(Notice(f"recipe {name}: commit deferred: {change.deferred_reason}", "warning"))

    def dispatcher_forget(self, name: str) -> None:
        self._dispatcher.drop(name)
        self.guard.forget(name)

    async def save_recipe(self, name: str, source: str, *, author: str = "agent") -> RecipeRecord:
        """The `create_recipe` entry point: the whole pipeline; raises PipelineError (disk and git unchanged)."""
        change = await self.save_change(name, source, author=author)
        record = change.record or self.book.get(name)
        assert record is not None
        return record

    async def save_change(self, name: str, source: str, *, author: str = "agent") -> RecipeChange:
        change = await self.store.save(name, source)
        if change.changed:
            self.emit(ToolAuthored(name, "recipe", source, change.commit, change.created))
            self._changed(change, name, f"recipe {'added' if change.created else 'updated'} by {author}")
        return change

    def history(self, name: str) -> list[HistoryEntry]:
        """The commits that touched the recipe's file, newest first."""
        return self.store.history(name)

    async def revert(self, name: str, rev: str | None = None) -> RecipeChange:
        change = await self.store.revert(name, rev)
        self._changed(change, name, "recipe reverted")
        return change

    async def prune(self, name: str) -> RecipeChange:
        change = await self.store.prune(name)
        self._changed(change, name, "recipe pruned")
        return change

    async def restore(self, name: str) -> RecipeChange:
        change = await self.store.restore(name)
        self._changed(change, name, "recipe restored")
        return change

    # triggers ----------------------------------------------------------------
    def slash_commands(self) -> list[tuple[str, str]]:
        """(name, description) of every runnable `command` recipe: `/<name> args` runs it."""
        return [(recipe.name, recipe.description) for recipe in self.book.runnable("command")]

    async def run_command(self, name: str, args_text: str = "") -> list[RecipeRun]:
        """Run the command recipe `name` with the text typed after `/<name>`; raises PipelineError if it cannot run."""
        record = self.book.get(name)
        if record is None or record.recipe is None or record.recipe.trigger.on != "command":
            raise PipelineError("missing", f"no command recipe /{name}")
        self._ensure_runnable(record)
        return await self._dispatcher.submit(Job([record.recipe], "command", {"args": args_text.strip()}))

    async def session_started(self) -> list[RecipeRun]:
        recipes = self.book.runnable("session_start")
        if not recipes:
            return []
        return await self._dispatcher.submit(Job(recipes, "session_start", {}))

    def tool_authored(self, name: str) -> asyncio.Future[list[RecipeRun]] | None:
        """Schedule tool_authored recipes (never waits: safe to call from inside an agent turn)."""
        recipes = self.book.runnable("tool_authored")
        if not recipes:
            return None
        return self._dispatcher.submit(Job(recipes, "tool_authored", {"name": name}))

    def tool_drifted(self, name: str, repair_prompt: str) -> asyncio.Future[list[RecipeRun]] | None:
        """Schedule tool_drifted recipes for a tool whose dependencies changed and whose tests now fail."""
        recipes = self.book.runnable("tool_drifted")
        if not recipes:
            return None
        return self._dispatcher.submit(Job(recipes, "tool_drifted", {"name": name, "repair": repair_prompt}))

    def files_changed(self, paths: Iterable[str]) -> None:
        """Project-relative paths changed: queue them for each file_changed recipe whose globs match."""
        changed = sorted(set(paths))
        for recipe in self.book.runnable("file_changed"):
            if self.guard.paused(recipe.name):
                continue
            hits = [path for path in changed if matches(path, recipe.trigger.paths)]
            fresh = [path for path in hits if not self.guard.is_own_change(recipe.name, path, self._mtime(path))]
            own = self.guard.take_own_changes(recipe.name)
            if own and recipe.name not in self._own_noticed:
                self._own_noticed.add(recipe.name)
                self.emit(Notice(
                    f"recipe {recipe.name} changed {', '.join(own[:5])}{' …' if len(own) > 5 else ''}, which matches its own "
                    "trigger: not re-running it for its own change (loop protection)",
                    "warning",
                ))
            if fresh:
                self._dispatcher.add_changes(recipe, fresh)

    def _mtime(self, rel: str) -> float | None:
        try:
            return (self.project.root / rel).stat().st_mtime
        except OSError:
            return None

    async def run_recipe(self, name: str, *, paths: Iterable[str] = (), args: str = "", tool: str = "") -> list[RecipeRun]:
        """Run one recipe now, whatever its trigger, with the given context (the CLI's `recipes run`)."""
        record = self.book.get(name)
        if record is None or record.recipe is None:
            raise PipelineError("missing", f"no recipe {name}" + (f": {record.error.message}" if record and record.error else ""))
        self._ensure_runnable(record, manual=True)
        context = {"paths": sorted(set(paths)), "args": args, "name": tool}
        return await self._dispatcher.submit(Job([record.recipe], record.recipe.trigger.on, context))

    def _ensure_runnable(self, record: RecipeRecord, *, manual: bool = False) -> None:
        if record.problems:
            raise PipelineError("run", f"recipe {record.name} is broken: {'; '.join(record.problems)}")
        if record.recipe is not None and not record.recipe.enabled and not manual:
            raise PipelineError("run", f"recipe {record.name} is disabled (enabled = false)")

    # watching ------------------------------------------------------------------
    async def watch(self) -> None:
        """Watch the project until cancelled (watchfiles): file changes fire recipes, recipe edits reload them.
        `self.watcher.ready` is set once the watch is live."""
        await self.watcher.run()

    async def reload_recipes(self, names: Iterable[str]) -> list[str]:
        """Recipe files changed on disk (an editor, git): revalidate and re-register them, commit valid edits."""
        return await reload_recipe_files(self, names)

    async def idle(self) -> None:
        """Wait until no recipe is pending or running."""
        await self._dispatcher.idle()

    async def aclose(self) -> None:
        await self._dispatcher.aclose()
        self.runlog.close()

    # running -------------------------------------------------------------------
    async def _run_job(self, job: Job) -> list[RecipeRun]:
        runs: list[RecipeRun] = []
        for recipe in sorted(job.recipes, key=lambda item: item.order):
            if job.trigger == "file_changed":
                allowed, message = self.guard.allow_dispatch(recipe.name)
                if message:
                    self.emit(Notice(message, "warning"))
                if not allowed:
                    continue
            live = self.book.get(recipe.name)
            if live is not None and live.recipe is not None:
                recipe = live.recipe
            for values, lists in self._invocations(recipe, job.trigger, job.context):
                runs.append(await self._run_one(recipe, job.trigger, values, lists))
        if runs:
            self.refresh_stats()
        return runs

    @staticmethod
    def _invocations(recipe: Recipe, trigger: str, context: dict[str, Any]) -> list[tuple[dict[str, str], dict[str, list[str]]]]:
        paths: list[str] = list(context.get("paths", []))
        base = {"paths": " ".join(paths), "args": str(context.get("args", "")), "name": str(context.get("name", "")), "path": "",
                "repair": str(context.get("repair", ""))}
        lists = {"paths": paths}
        action_value: Any = recipe.action.args if recipe.action.tool is not None else recipe.action.prompt
        if uses(action_value, "path") and paths:
            return [({**base, "path": path}, lists) for path in paths]
        if uses(action_value, "path"):
            return []
        return [(base, lists)]

    async def _run_one(self, recipe: Recipe, trigger: str, values: dict[str, str], lists: dict[str, list[str]]) -> RecipeRun:
        async with self._run_lock:
            self.guard.run_started(recipe.name)
            self._own_noticed.discard(recipe.name)
            started = time.perf_counter()
            try:
                if recipe.action.tool is not None:
                    ok, summary, detail = await self._call_tool(recipe, fill_value(recipe.action.args, values, lists))
                else:
                    ok, summary, detail = await self._prompt(recipe, fill_text(recipe.action.prompt or "", values))
            except Exception as exc:  # any failure is this recipe's alone
                ok, summary, detail = False, f"{type(exc).__name__}: {exc}", {}
            finally:
                self.guard.run_finished(recipe.name)
            run = RecipeRun(recipe.name, trigger, ok, summary, (time.perf_counter() - started) * 1000, recipe.action.describe(), detail)
        try:
            self.runlog.record(run, version=recipe.source_sha[:12])
        except (sqlite3.Error, OSError, TypeError, ValueError) as exc:  # the disk, state.db, a value JSON cannot hold
            self.emit(Notice(f"recipe {recipe.name}: could not write the audit log: {exc}", "warning"))
        verdict = "ok" if ok else "failed"
        self.emit(Notice(f"recipe {recipe.name} ({trigger}) {verdict}: {_short(summary)}", "info" if ok else "error"))
        return run

    async def _call_tool(self, recipe: Recipe, args: JsonObject) -> tuple[bool, str, dict[str, Any]]:
        tool = recipe.action.tool or ""
        call_id = f"recipe-{recipe.name}-{next(self._call_ids)}"
        self.emit(ToolCallStarted(call_id, tool, args, authored=True))
        started = time.perf_counter()
        record = self.catalog.get(tool)
        writes = record is not None and record.spec is not None and record.spec.writes
        if writes:
            refusal = await self._write_refusal(recipe, tool, args)
            if refusal is not None:
                summary = f"{tool} refused: {refusal}"
                self.emit(ToolCallFinished(call_id, tool, summary, True, (time.perf_counter() - started) * 1000, authored=True))
                return False, summary, {"tool": tool, "args": args, "refused": refusal}
        try:
            result = await self.catalog.call_tool(tool, args, allow_writes=writes)
        except PipelineError as error:
            summary = f"{tool}: {error.message}"
            self.emit(ToolCallFinished(call_id, tool, summary, True, (time.perf_counter() - started) * 1000, authored=True))
            return False, summary, {"tool": tool, "args": args, "error": error.to_dict()}
        if result.ok:
            value = result.value if result.value_is_repr else json.dumps(result.value, ensure_ascii=False, default=repr)
            summary = f"{tool} → {value}"
        else:
            summary = f"{tool} failed: {result.error or 'error'}"
        self.emit(ToolCallFinished(call_id, tool, summary, not result.ok, result.duration_ms, authored=True,
                                   truncated=result.output_truncated))
        detail = {"tool": tool, "args": args, "value": result.value, "error": result.error, "error_kind": result.error_kind,
                  "stdout": result.stdout, "stderr": result.stderr, "tier": result.tier}
        return bool(result.ok), summary, detail

    async def _write_refusal(self, recipe: Recipe, tool: str, args: JsonObject) -> str | None:
        """None when the tool (WRITES = True) may run with the project writable, else why not."""
        if self.permissions is None:
            return ("it declares WRITES = True (it may change project files) and this recipe engine has no one to "
                    "approve that")
        request = ApprovalRequest("write", tool, f"recipe {recipe.name}: {tool} may change project files (WRITES = True)",
                                  json.dumps(args, indent=1, ensure_ascii=False, default=repr))
        decision = await self.permissions.check(request)
        if decision.allowed:
            return None
        return f"it declares WRITES = True (it may change project files) and was not approved: {decision.reason}"

    async def _prompt(self, recipe: Recipe, text: str) -> tuple[bool, str, dict[str, Any]]:
        if self.submit_prompt is None:
            return False, ("no agent to hand the prompt to: configure a model (ANTHROPIC_API_KEY, or ANTHROPIC_BASE_URL "
                           "for a local server) and run it in the TUI"), {"prompt": text}
        await self.submit_prompt(text)
        return True, f"prompt handed to the agent: {_short(text, 120)}", {"prompt": text}
