"""The `Catalog` facade: open, list, save, call, revert, prune, restore, history, diff, drift, search, watch."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path
from collections.abc import Awaitable, Callable
from typing import Any, Literal

import tui_agent.core.trust.check  # noqa: F401  # it tells the git door how to ask workspace trust (catalog commits)
from tui_agent.core.catalog.drift import DriftChecker
from tui_agent.core.catalog.drift_tracker import DRIFTED_FAILING, DriftTracker
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.catalog.files import read_bytes_or_none
from tui_agent.core.catalog.items import tool_item, tool_record
from tui_agent.core.versioning.gitstore import CatalogGit, CommitOutcome, HistoryEntry
from tui_agent.core.catalog.models import DriftReport, ToolRecord, ToolSpec
from tui_agent.core.catalog.names import BUILTIN_TOOL_NAMES, check_lookup_name
from tui_agent.core.catalog.pipeline import Pipeline, SandboxLike
from tui_agent.core.catalog.registry import Entry, Registry
from tui_agent.core.catalog.reports import check_arguments, search_specs
from tui_agent.core.catalog.startup import LoadReport, load_existing
from tui_agent.core.catalog.outside_edits import OutsideEdits
from tui_agent.core.catalog.state import StateStore, UsageStats
from tui_agent.core.catalog.version_commits import VersionCommits
from tui_agent.core.catalog.toolfile import check_name
from tui_agent.core.versioning.store_interface import Change, StoreItem
from tui_agent.core.catalog import untrusted
from tui_agent.core.catalog.untrusted import intact_copy, last_good_copy, recover_runnable
from tui_agent.core.versioning.unsaved import unsaved_work
from tui_agent.core.versioning.versions import diff_since, revert_target
from tui_agent.core.changes import ChangeEvent, ChangeFeed
from tui_agent.core.events import CatalogChanged, ToolAuthored, UsageChanged
from tui_agent.core.project import Project
from tui_agent.core.watch import ProjectWatcher
from tui_agent.core.sandbox import RunResult, SandboxPolicy, SandboxUnavailable, Snippet, ToolBatch, ToolCall
from tui_agent.core.content import JsonObject

__all__ = ["BUILTIN_TOOL_NAMES", "Catalog", "DriftReport", "HistoryEntry", "PipelineError", "ToolRecord", "ToolSpec"]

AskInitGit = Callable[[Project], "bool | Awaitable[bool]"]


class Catalog:
    """The project's tool catalog, a `VersionedStore` of kind "tool". Every mutation runs the authoring pipeline
    (validate → atomic write → commit → register) under one lock and returns a `Change`."""

    kind: Literal["tool", "recipe"] = "tool"

    def __init__(self, project: Project, sandbox: SandboxLike, git: CatalogGit, state: StateStore,
                 pipeline: Pipeline, changes: ChangeFeed | None = None) -> None:
        self.project = project
        self.sandbox = sandbox
        self.git = git
        self.state = state
        self.pipeline = pipeline
        self.registry: Registry = pipeline.registry
        self.version_commit = VersionCommits(project, git, state, self.registry)
        self.drift_tracker = DriftTracker(project, state, pipeline, self.version_commit, git.author_name, git.store_blobs)
        self.outside = OutsideEdits(project, pipeline, git, state)
        self.settle = self.outside.settle  # hand edits commit once a burst of saves settles
        self.load_report = LoadReport()
        self.watcher: ProjectWatcher | None = None  # the runtime's project watcher, or the one `watch()` runs
        self.changes = changes or ChangeFeed()
        self._listeners: dict[Callable[[CatalogChanged], None], Callable[[ChangeEvent], None]] = {}

    @classmethod
    async def open(cls, project: Project, sandbox: SandboxLike, *, ask_init_git: AskInitGit | None = None,
                   inspect_timeout_s: float = 60.0, test_timeout_s: float = 10.0,
                   changes: ChangeFeed | None = None) -> "Catalog":
        """Create `.agent/`, find (or, if `ask_init_git` agrees, create) the repository, then load the tools."""
        if project.outside_git:
            raise ValueError(f"{project.root} is used without git, so it has no tools or recipes (they are kept in "
                             ".agent/ and versioned in git); to have them, create the repository (git init, or "
                             "start with --init-git)")
        project.ensure_layout()
        git = CatalogGit(project.root)
        if not git.status().has_repo and ask_init_git is not None:
            answer = ask_init_git(project)
            if inspect.isawaitable(answer):
                answer = await answer
            if answer:
                git = await asyncio.to_thread(CatalogGit.init_repo, project.root)
        state = StateStore(project.state_db)
        pipeline = Pipeline(project, sandbox, state, Registry(), git, inspect_timeout_s=inspect_timeout_s,
                            test_timeout_s=test_timeout_s)
        catalog = cls(project, sandbox, git, state, pipeline, changes)
        async with pipeline.lock:
            catalog.load_report = await load_existing(pipeline, git)
            catalog.outside.hashes = catalog.load_report.hashes
            for name, verb in catalog.load_report.left_to_watcher.items():
                if verb != "remove":  # a revert or prune here commits the other process's settling edit first
                    catalog.settle.adopt(name, verb)
        return catalog

    async def aclose(self) -> None:
        await self.settle.flush()  # a hand edit still settling is committed now, not left to the next start
        self.state.close()
        self.git.close()

    # listeners -------------------------------------------------------------------
    def add_listener(self, callback: Callable[[CatalogChanged], None]) -> None:
        """Call `callback` with every CatalogChanged about tools (a filter over `self.changes`)."""
        def tools_only(event: ChangeEvent) -> None:
            if isinstance(event, CatalogChanged) and event.kind == "tool":
                callback(event)

        self._listeners[callback] = tools_only
        self.changes.add_listener(tools_only)

    def remove_listener(self, callback: Callable[[CatalogChanged], None]) -> None:
        listener = self._listeners.pop(callback, None)
        if listener is not None:
            self.changes.remove_listener(listener)

    def _notify(self, names: list[str] | tuple[str, ...], reason: str) -> None:
        self.changes.publish(CatalogChanged(tuple(names), reason, "tool"))

    # reading ---------------------------------------------------------------------
    def _record(self, entry: Entry, usage: dict[str, UsageStats]) -> ToolRecord:
        return tool_record(entry, usage.get(entry.name), self.version_commit(entry), self.drift_tracker.status(entry))

    def tools(self) -> list[ToolRecord]:
        usage = self.state.usage()
        self.drift_tracker.fresh()
        records = [self._record(entry, usage) for entry in self.registry.entries()]
        self.drift_tracker.failing = {r.name: r.spec.source_sha for r in records if r.status == DRIFTED_FAILING and r.spec}
        return records

    @property
    def failing_drift(self) -> dict[str, str]:
        """Drifted tools whose tests fail -> the source_sha they failed at (for the prompt's index)."""
        return self.drift_tracker.failing

    @property
    def drift_checker(self) -> DriftChecker:
        return self.drift_tracker.checker

    def items(self) -> list[StoreItem]:
        return [tool_item(record) for record in self.tools()]

    def get(self, name: str) -> ToolRecord | None:
        entry = self.registry.get(name)
        return self._current(entry) if entry else None

    def spec(self, name: str) -> ToolSpec | None:
        """The last good version's spec of a callable tool, or None; unlike `get`, no usage, drift or git look-up
        (what a call needs)."""
        entry = self.registry.get(name)
        return entry.spec if entry is not None else None

    def _current(self, entry: Entry) -> ToolRecord:
        self.drift_tracker.fresh()
        return self._record(entry, self.state.usage())

    def specs(self) -> list[ToolSpec]:
        """The callable tools (last good versions), for the model's tool list."""
        return [entry.spec for entry in self.registry.entries() if entry.spec is not None]

    def source(self, name: str) -> str | None:
        """The current file's text (possibly broken), else the last good version's text."""
        data = read_bytes_or_none(self.project.tool_path(name))
        entry = self.registry.get(name)
        if data is None and entry is not None and entry.runnable is not None:
            data = read_bytes_or_none(entry.runnable)
        return data.decode("utf-8", "replace") if data is not None else None

    def search(self, query: str, limit: int = 20) -> list[ToolSpec]:
        return search_specs(self.specs(), self.state.usage(), query, limit)

    def history(self, name: str) -> list[HistoryEntry]:
        check_lookup_name(name)
        return self.git.history(self.project.relative(self.project.tool_path(name)))

    def diff(self, name: str, rev: str | None = None) -> str:
        """Diff of the tool file from `rev` (default: the commit before its latest one) to the work tree."""
        check_lookup_name(name)
        return diff_since(self.git, self.project.relative(self.project.tool_path(name)), rev, name)

    def commit_blocker(self) -> str | None:
        """Why the catalog's changes are not committed: git cannot commit now (a detached HEAD, a merge in progress, no
        repository) or the last commit was deferred (a failing hook, the hooks hold); None when nothing stands in the way."""
        return self.git.status().reason or self.pipeline.last_deferred_reason

    # mutations -------------------------------------------------------------------
    async def save(self, name: str, source: str, *, author: str = "agent") -> Change:
        """Create or update a tool through the whole pipeline; raises PipelineError, leaving everything as it was."""
        check_name(name)
        await self.settle.flush(name)  # the person's settling edit becomes its own version first
        async with self.pipeline.lock:
            existed = self.registry.get(name) is not None or self.project.tool_path(name).exists()
            verb = "update" if existed else "add"
            suffix = "" if author == "agent" else f" ({author})"
            entry, outcome = await self.pipeline.save(name, source.encode("utf-8"), f"tuiagent: {verb} tool {name}{suffix}")
        record = self._current(entry)
        self.changes.publish(ToolAuthored(name, "tool", source, record.commit, verb == "add"))
        return self._changed(name, verb, outcome, record)

    async def revert(self, name: str, rev: str | None = None) -> Change:
        """Back to the previous (or the given) committed version, through the pipeline, as a new commit."""
        check_lookup_name(name)
        await self.settle.flush(name)
        rel = self.project.relative(self.project.tool_path(name))
        async with self.pipeline.lock:
            self._refuse_unsaved(name, "revert")
            rev, data = revert_target(self.git, rel, read_bytes_or_none(self.project.tool_path(name)), rev, name)
            entry, outcome = await self.pipeline.save(name, data, f"tuiagent: revert tool {name} to {rev[:8]}")
        return self._changed(name, "revert", outcome, self._current(entry))

    async def prune(self, name: str) -> Change:
        """Delete the tool (a new commit; `restore` brings it back)."""
        check_lookup_name(name)
        await self.settle.flush(name)
        async with self.pipeline.lock:
            if self.registry.get(name) is None and not self.project.tool_path(name).exists():
                raise PipelineError("missing", f"no tool named {name!r}")
            self._refuse_unsaved(name, "prune")
            outcome = await self.pipeline.remove(name, f"tuiagent: prune tool {name}")
        return self._changed(name, "prune", outcome, None)

    def pruned(self) -> list[str]:
        """Tools git history has and the work tree does not (pruned or deleted): what `restore` can bring back."""
        folder = self.project.relative(self.project.tools_dir)
        names = [Path(path).stem for path in self.git.deleted_files(folder) if path.endswith(".py")]
        return [name for name in names if not self.project.tool_path(name).exists()]

    async def restore(self, name: str) -> Change:
        """Bring a pruned or deleted tool back from git history, through the pipeline, as a new commit."""
        check_lookup_name(name)
        async with self.pipeline.lock:
            if self.project.tool_path(name).exists():
                raise PipelineError("missing", f"{name} exists; nothing to restore")
            self._refuse_unsaved(name, "restore")
            found = self.git.last_version_before_deletion(self.project.relative(self.project.tool_path(name)))
            found = found or last_good_copy(self.state, self.pipeline, name)
            if found is None:
                raise PipelineError("missing", f"no deleted version of {name!r} in git history or in .agent/cache")
            writer, data = found
            entry, outcome = await self.pipeline.save(name, data, f"tuiagent: restore tool {name} (from {untrusted.commit_id(writer) and writer[:8] or writer})")
        return self._changed(name, "restore", outcome, self._current(entry))

    def _refuse_unsaved(self, name: str, verb: str) -> None:
        problem = unsaved_work(self.git, self.project.root, self.project.relative(self.project.tool_path(name)), verb)
        if problem is not None:
            raise PipelineError("unsaved", problem)

    def _changed(self, name: str, verb: str, outcome: CommitOutcome, record: ToolRecord | None) -> Change:
        """Publish the CatalogChanged of a mutation and describe it as a Change."""
        self._notify([name], verb if outcome.committed else f"{verb}; {outcome.message}")
        return Change("tool", name, verb, outcome.committed, outcome.sha, outcome.deferred_reason, outcome.message,
                      created=verb == "add", record=record)

    # calls -----------------------------------------------------------------------
    async def call_tool(self, name: str, args: JsonObject, *, allow_network: bool = False,
                        allow_writes: bool = False, policy: SandboxPolicy | None = None) -> RunResult:
        """Run the last good version in the sandbox and record usage and the files it read.

        The project is read-only for the call unless the tool declares WRITES = True and the caller passes
        `allow_writes` (the caller has the user's approval); the network is off unless it declares NETWORK = True
        and the caller passes `allow_network`; a tool that lists names reaches only those. (The rlimits tier cannot make the project read-only.)"""
        entry, args = self._callable(name, args)
        assert entry.spec is not None and entry.runnable is not None
        base = policy or self.default_policy()
        policy = base.with_(network=base.network or (entry.spec.network if allow_network else False),
                            project_writable=base.project_writable and entry.spec.writes and allow_writes)
        run = await self.sandbox.run(_tool_call(entry, args), policy)
        await self._record_usage([(entry, run)])
        return run

    async def call_tools(self, calls: list[tuple[str, JsonObject]]) -> list[RunResult]:
        """`call_tool(name, args)` of each call (no network grant, the project read-only) in ONE sandboxed run, in
        order: a reply's back-to-back calls share one worker, each call in its own forked child. One by one if that run
        fails."""
        prepared = [self._callable(name, args) for name, args in calls]
        batch = ToolBatch(tuple(_tool_call(entry, args) for entry, args in prepared))
        try:
            runs = await self.sandbox.run(batch, self.default_policy().with_(project_writable=False))
        except SandboxUnavailable:
            return [await self.call_tool(name, args) for name, args in calls]
        await self._record_usage([(entry, run) for (entry, _args), run in zip(prepared, runs, strict=True)])
        return runs

    def _callable(self, name: str, args: dict[str, Any]) -> tuple[Entry, dict[str, Any]]:
        """The tool's entry (its last good copy on disk) and its checked arguments."""
        entry = self.registry.get(name)
        if entry is None or entry.spec is None or entry.runnable is None:
            raise PipelineError("missing", f"no callable tool named {name!r}")
        args = check_arguments(entry.spec, args)
        self._ensure_runnable(entry)
        return entry, args

    def _ensure_runnable(self, entry: Entry) -> None:
        """Put back the tool's last good runnable copy when it is missing or not what was validated."""
        assert entry.spec is not None and entry.runnable is not None
        if not intact_copy(entry.runnable, entry.spec.source_sha):
            recover_runnable(self.project, self.git, self.pipeline, entry)

    async def _record_usage(self, runs: list[tuple[Entry, RunResult]]) -> None:
        """Usage counts and the files each run read; queued for the reply's one transaction when one is open."""
        def record() -> None:
            for entry, run in runs:
                assert entry.spec is not None
                self.state.record_run(entry.name, ok=run.ok, duration_ms=run.duration_ms, files_read=run.files_read,
                                      source_sha=entry.spec.source_sha)

        if self.state.deferring:  # queued in memory for the reply's one transaction: no thread hop
            record()
        else:
            await asyncio.to_thread(record)
        self.changes.publish(UsageChanged())

    async def run_python(self, code: str, *, allow_writes: bool = False, policy: SandboxPolicy | None = None) -> RunResult:
        """Run a snippet in the sandbox with every callable tool importable by name at its last good version
        (a tool whose file on disk is broken is imported as the version the catalog serves). The project is
        read-only for it unless `allow_writes` (the caller's permission mode lets agent code edit files)."""
        paths: dict[str, str] = {}
        for entry in self.registry.entries():
            if entry.spec is None or entry.runnable is None:
                continue
            try:
                self._ensure_runnable(entry)
            except PipelineError:
                continue  # its last good copy is gone everywhere: not importable, like an unknown module
            paths[entry.name] = str(entry.runnable)
        base = policy or self.default_policy()
        policy = base.with_(project_writable=base.project_writable and allow_writes)
        return await self.sandbox.run(Snippet(code, tool_paths=paths), policy)

    def default_policy(self) -> SandboxPolicy:
        """The sandbox's own limits (what a call without a policy would get)."""
        return self.sandbox.policy

    # drift -----------------------------------------------------------------------
    async def drift(self, name: str | None = None) -> list[DriftReport]:
        """Drift reports (the diff of dependency files since each tool's commit or accepted review, tests re-run) for
        one tool (a broken one too: the report says so) or every callable one."""
        self.drift_tracker.fresh()
        names = [name] if name else [e.name for e in self.registry.entries() if e.spec is not None]
        reports = []
        for tool in names:
            entry = self.registry.get(tool)
            if entry is None or entry.spec is None or entry.runnable is None:
                raise PipelineError("missing", f"no callable tool named {tool!r}")
            reports.append(await self.drift_tracker.report(entry))
        return reports

    async def recheck_drift(self) -> list[DriftReport]:
        """Run the tests of tools that drifted since their last check; their status (`drifted · failing`) follows."""
        reports = await self.drift_tracker.recheck(self.registry.entries())
        self.tools()  # refreshes failing_drift for the prompt's index
        if reports:
            self._notify([report.name for report in reports], "drift re-checked")
        return reports

    async def accept_drift(self, name: str) -> Change:
        """Mark a drifted tool reviewed at the current commit: its dependency files as they are now become the
        reference drift is measured from (committed in `.agent/drift-reviews.json`)."""
        check_lookup_name(name)
        async with self.pipeline.lock:
            entry = self.registry.get(name)
            if entry is None:
                raise PipelineError("missing", f"no tool named {name!r}")
            outcome = await self.drift_tracker.accept(entry, self.git.status().head)
        record = self._current(entry)
        self._notify([name], "drift accepted" if outcome.committed else f"drift accepted; {outcome.message}")
        return Change("tool", name, "accept-drift", outcome.committed, outcome.sha, outcome.deferred_reason,
                      outcome.message, record=record)

    # hot reload --------------------------------------------------------------------
    async def outside_edit(self, names: set[str]) -> list[str]:
        """Revalidate tool files changed outside the catalog (own writes, same content hash, are ignored); a good
        edit is live at once and commits once it settles (`outside_edits`)."""
        changed = await self.outside.handle(names)
        if changed:
            self._notify(changed, "edited outside tuiagent")
        return changed

    async def watch(self) -> None:
        """Hot reload on its own (no runtime): a project watcher feeding only this catalog, until cancelled."""
        self.watcher = ProjectWatcher(self.project, self.changes, on_tools=self.outside_edit)
        await self.watcher.run()


def _tool_call(entry: Entry, args: dict[str, Any]) -> ToolCall:
    """The sandbox program calling a registered tool's function (its last good copy) with `args`."""
    assert entry.spec is not None and entry.runnable is not None
    return ToolCall(entry.name, entry.name, args, str(entry.runnable), f"tool {entry.name}", entry.spec.source_sha)
