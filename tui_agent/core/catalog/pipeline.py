"""The authoring pipeline: static checks → sandboxed import/schema/tests → atomic write → git commit → register."""

from __future__ import annotations

import asyncio
import os
import secrets
from pathlib import Path
from typing import Any, Protocol, overload

from tui_agent.core.catalog.errors import STAGES, PipelineError, failure_reason, write_failed
from tui_agent.core.errors import PROJECT_FAILURES
from tui_agent.core.versioning.gitstore import CommitOutcome
from tui_agent.core.versioning.writelock import WriterLock
from tui_agent.core.catalog.files import Undo, atomic_write, read_bytes_or_none
from tui_agent.core.catalog.inspector import DEFAULT_TEST_TIMEOUT_S, INSPECTOR_VERSION
from tui_agent.core.catalog.models import ToolSpec
from tui_agent.core.catalog.registry import Entry, Registry
from tui_agent.core.catalog.state import StateStore
from tui_agent.core.catalog.untrusted import intact_copy, result_problem
from tui_agent.core.catalog.toolfile import check_tool_bytes, source_sha
from tui_agent.core.project import AGENT_GITIGNORE, Project
from tui_agent.core.sandbox import (
    ERROR_CANCELLED, ERROR_SANDBOX, ERROR_TIMEOUT, RunResult, SandboxPolicy, Snippet, ToolBatch, ToolCall,
)

INSPECTOR_MODULE = "tui_agent.core.catalog.inspector"
TRANSIENT_FAILURES = (ERROR_SANDBOX, ERROR_CANCELLED)
"""Run failures of the sandbox itself, not of the tool: never cached."""


class SandboxLike(Protocol):
    """What the catalog needs of the sandbox (core.sandbox.Sandbox): call a tool's function, run a snippet,
    validate many tools in one run."""

    @property
    def tier(self) -> str:
        """"bubblewrap" or "rlimits": only bubblewrap can keep the project read-only."""
        ...

    @property
    def policy(self) -> SandboxPolicy:
        """The limits a run without its own policy gets."""
        ...

    def prewarm(self, runs: int) -> None: ...

    @overload
    async def run(self, program: ToolBatch, policy: SandboxPolicy | None = None) -> list[RunResult]: ...

    @overload
    async def run(self, program: ToolCall | Snippet, policy: SandboxPolicy | None = None) -> RunResult: ...


class GitLike(Protocol):
    def commit(self, changes: dict[str, bytes | None], message: str) -> CommitOutcome: ...
    def show(self, path: str, rev: str) -> bytes | None: ...
    def last_commit_for(self, path: str) -> str | None: ...
    def pending(self) -> dict[str, str]: ...


class Pipeline:
    """Every change to a tool file goes through here, under one lock, so disk, git and registry stay consistent."""

    def __init__(self, project: Project, sandbox: SandboxLike, state: StateStore, registry: Registry, git: GitLike, *,
                 inspect_timeout_s: float = 60.0, test_timeout_s: float = DEFAULT_TEST_TIMEOUT_S) -> None:
        self.project = project
        self.sandbox = sandbox
        self.state = state
        self.registry = registry
        self.git = git
        # A tool's import and its own tests are unvetted code: they see the project read-only (bubblewrap tier).
        self.inspect_policy = SandboxPolicy(timeout_s=inspect_timeout_s, network=False, project_writable=False)
        self.test_timeout_s = test_timeout_s
        self.lock = asyncio.Lock()
        self.writer = WriterLock(project.root)  # across processes: held from reading the file to its commit
        self.last_commit_note: str | None = None
        self.last_deferred_reason: str | None = None
        self._gitignore_done = False
        self._runnable_dir = project.cache_dir / "tools"
        self.read_only = not writable_folder(self._runnable_dir)
        """`.agent/cache` cannot be written (a read-only clone): tools are inspected and run from their files."""

    # validation ----------------------------------------------------------------
    async def validate(self, name: str, data: bytes, *, use_cache: bool = False, staged: Path | None = None) -> ToolSpec:
        """Static checks, then import + schema + the tool's own tests in the sandbox; raises PipelineError.

        With `use_cache`, a result recorded for the same bytes and inspector version is reused: a success, or a
        failure recorded with timeouts at least as long as today's (so a hanging import costs its timeout once).
        """
        check_tool_bytes(name, data)
        sha = source_sha(data)
        if use_cache:
            cached = self.state.cached_validation(sha, INSPECTOR_VERSION)
            if cached is not None and cached.get("ok") and cached["schema"]["name"] == name:
                return ToolSpec.from_inspection(cached, sha)
            if cached is not None and self.cached_failure_applies(cached, name):
                raise PipelineError.from_dict(cached["error"])
        run = await self.run_inspector(name, data, run_tests=True, staged=staged)
        return await self.finish_validation(name, data, run)

    async def finish_validation(self, name: str, data: bytes, run: RunResult) -> ToolSpec:
        """The inspector's run of `data` into a ToolSpec (cached by content hash) or a PipelineError (cached unless
        the sandbox itself failed; a failing test is run once more first)."""
        sha = source_sha(data)
        try:
            result = interpret_inspection(run, self.inspect_policy.timeout_s)
        except PipelineError as error:
            if error.stage == "tests":
                return await self.retest(name, data, sha)
            if run.ok or run.error_kind not in TRANSIENT_FAILURES:
                self.remember_failure(sha, name, error)
            raise
        if result["schema"]["name"] != name:
            raise PipelineError("inspect", f"the inspector described {result['schema']['name']!r}, not {name!r}")
        self.state.cache_validation(sha, INSPECTOR_VERSION, result)
        return ToolSpec.from_inspection(result, sha)

    async def retest(self, name: str, data: bytes, sha: str) -> ToolSpec:
        """A tool test failed: run the tests once more. A failure is cached only when it repeats; a pass on the second
        run means a flaky test, so neither outcome is cached as final (the next load tests again)."""
        run = await self.run_inspector(name, data, run_tests=True)
        try:
            result = interpret_inspection(run, self.inspect_policy.timeout_s)
        except PipelineError as error:
            if error.stage == "tests" and (run.ok or run.error_kind not in TRANSIENT_FAILURES):
                self.remember_failure(sha, name, error)
            raise
        if result["schema"]["name"] != name:
            raise PipelineError("inspect", f"the inspector described {result['schema']['name']!r}, not {name!r}")
        return ToolSpec.from_inspection(result, sha)

    def remember_failure(self, sha: str, name: str, error: PipelineError) -> None:
        """Cache a rejection by content hash; never over a success recorded for the same bytes."""
        previous = self.state.cached_validation(sha, INSPECTOR_VERSION)
        if previous is not None and previous.get("ok"):
            return
        self.state.cache_validation(sha, INSPECTOR_VERSION, {
            "ok": False, "name": name, "error": error.to_dict(), "inspector_version": INSPECTOR_VERSION,
            "inspect_timeout_s": self.inspect_policy.timeout_s, "test_timeout_s": self.test_timeout_s,
        })

    def cached_failure_applies(self, cached: dict[str, Any], name: str) -> bool:
        """A recorded failure stands for this name when no timeout has grown since (a longer one might pass)."""
        if cached.get("ok") is not False or cached.get("name") != name or not isinstance(cached.get("error"), dict):
            return False
        try:
            return (float(cached["inspect_timeout_s"]) >= self.inspect_policy.timeout_s
                    and float(cached["test_timeout_s"]) >= self.test_timeout_s)
        except (KeyError, TypeError, ValueError):
            return False

    async def inspect(self, name: str, data: bytes, *, run_tests: bool) -> dict[str, Any]:
        """Run the inspector on `data` in the sandbox; returns its successful result or raises PipelineError."""
        run = await self.run_inspector(name, data, run_tests=run_tests)
        return interpret_inspection(run, self.inspect_policy.timeout_s)

    async def run_inspector(self, name: str, data: bytes, *, run_tests: bool, staged: Path | None = None) -> RunResult:
        """The sandboxed inspector run on a staged copy of `data` (the project read-only for it).

        `staged` is a copy of `data` the caller already wrote (a batch at startup); it is left for the caller.
        """
        if staged is not None:
            return await self._inspect_file(staged, name, run_tests)
        if self.read_only:
            return await self._inspect_file(self.file_as_copy(name, data), name, run_tests)
        staging = self.project.cache_dir / "staging"
        staging.mkdir(parents=True, exist_ok=True)
        # one copy per run: two runs of one version at once (the drift key and the watcher's re-check) must not
        # share a copy the first to finish removes
        path = staging / f"{name}-{source_sha(data)[:16]}-{secrets.token_hex(4)}.py"
        atomic_write(path, data)
        try:
            return await self._inspect_file(path, name, run_tests)
        finally:
            path.unlink(missing_ok=True)

    async def _inspect_file(self, path: Path, name: str, run_tests: bool) -> RunResult:
        return await self.sandbox.run(ToolCall(
            INSPECTOR_MODULE, "inspect_tool_file",
            {"path": str(path), "name": name, "run_tests": run_tests, "test_timeout_s": self.test_timeout_s},
            label=f"inspect {name}"), self.inspect_policy)

    # runnable copies -------------------------------------------------------------
    @property
    def runnable_dir(self) -> Path:
        return self._runnable_dir

    def runnable_path(self, sha: str) -> Path:
        return self._runnable_dir / f"{sha}.py"

    def keep_runnable(self, data: bytes, name: str) -> Path:
        """The copy of `data` tools run from: `.agent/cache/tools/<sha>.py`, or in a read-only project the tool file."""
        sha = source_sha(data)
        path = self.runnable_path(sha)
        if intact_copy(path, sha):
            return path
        if self.read_only:
            return self.file_as_copy(name, data)
        path.unlink(missing_ok=True)  # changed behind tuiagent's back: never import that
        atomic_write(path, data)
        return path

    def file_as_copy(self, name: str, data: bytes) -> Path:
        """In a read-only project, the tool file itself when it holds exactly `data` (nothing can change it here)."""
        path = self.project.tool_path(name)
        if not intact_copy(path, source_sha(data)):
            raise PipelineError("write", f"{self.project.relative(self.project.cache_dir)}/ is read-only and this "
                                         f"version of {name} is not the file on disk, so it cannot be kept or checked")
        return path

    def register(self, name: str, spec: ToolSpec, data: bytes, commit: str | None) -> Entry:
        runnable = self.keep_runnable(data, name)
        self.state.record_version(name, spec.source_sha, commit)
        if commit:
            self.state.set_version_commit(name, spec.source_sha, commit)
        return self.registry.register(name, spec, runnable, self.state.version_commit(name, spec.source_sha))

    def register_all(self, versions: list[tuple[str, ToolSpec, bytes]]) -> None:
        """`register` for many uncommitted versions (a cold open): their rows saved in one transaction, read back once."""
        runnable: dict[str, Path] = {}
        with self.state.deferred():
            for name, spec, data in versions:
                runnable[name] = self.keep_runnable(data, name)
                self.state.record_version(name, spec.source_sha, None)
        recorded = self.state.all_version_commits()
        for name, spec, _data in versions:
            self.registry.register(name, spec, runnable[name], recorded.get((name, spec.source_sha)))

    # mutations (callers hold self.lock) -------------------------------------------
    async def write_validated(self, name: str, data: bytes, spec: ToolSpec, message: str) -> tuple[Entry, CommitOutcome]:
        """Atomically write an already validated version, commit it, register it; on failure put everything back."""
        path = self.project.tool_path(name)
        rel = self.project.relative(path)
        previous_bytes = read_bytes_or_none(path)
        previous_entry = self.registry.get(name)
        if previous_bytes == data:
            outcome = await self.commit({rel: data}, message)
            return self.register(name, spec, data, outcome.sha), outcome
        self.registry.set_disk_sha(name, spec.source_sha)
        undo = Undo(path)
        try:
            atomic_write(path, data)
        except OSError as exc:
            undo.discard()
            self.registry.restore_entry(name, previous_entry)
            raise write_failed(rel, exc) from exc
        try:
            outcome = await self.commit({rel: data}, message)
        except PROJECT_FAILURES as exc:  # git, the writer lock, the disk: the file is put back
            undo.restore()
            self.registry.restore_entry(name, previous_entry)
            raise PipelineError("commit", f"git commit failed, the file was put back: {failure_reason(exc)}") from exc
        undo.discard()
        return self.register(name, spec, data, outcome.sha), outcome

    async def save(self, name: str, data: bytes, message: str) -> tuple[Entry, CommitOutcome]:
        """The whole pipeline for a new or updated version (create_tool, revert, restore)."""
        spec = await self.validate(name, data)
        async with self.writer.hold():
            return await self.write_validated(name, data, spec, message)

    async def accept_disk(self, name: str, message: str, *, commit: bool = True) -> tuple[Entry | None, CommitOutcome | None]:
        """A person edited or created the file: validate what is on disk; commit + register, or mark it broken.
        A version another process already committed (its own write, seen by this process's watcher) is registered
        without a second commit. With `commit` False a new version is registered only (its commit comes later)."""
        path = self.project.tool_path(name)
        data = read_bytes_or_none(path)
        if data is None:
            return None, None
        sha = source_sha(data)
        try:
            spec = await self.validate(name, data)
        except PipelineError as error:
            return self.registry.mark_broken(name, error, sha), None
        rel = self.project.relative(path)
        async with self.writer.hold():
            if read_bytes_or_none(path) != data:  # edited again while we validated: the next event handles it
                return self.registry.get(name), None
            if await asyncio.to_thread(self.committed, rel) == data and not self.pending(rel):
                return self.register(name, spec, data, await asyncio.to_thread(self.git.last_commit_for, rel)), None
            if not commit:
                return self.register(name, spec, data, None), None
            outcome = await self.commit({rel: data}, message)
        return self.register(name, spec, data, outcome.sha), outcome

    def committed(self, rel: str) -> bytes | None:
        """The bytes of `rel` in HEAD (None when HEAD has no such file, or there is no repository or commit)."""
        try:
            return self.git.show(rel, "HEAD")
        except ValueError:
            return None

    def pending(self, rel: str) -> bool:
        """Whether a deferred change of `rel` waits in the journal (then HEAD is not the last word)."""
        return rel in self.git.pending()

    async def remove(self, name: str, message: str) -> CommitOutcome:
        """Delete the tool file (if still there), commit the deletion, unregister; put the file back on failure."""
        async with self.writer.hold():
            return await self.remove_locked(name, message)

    async def remove_locked(self, name: str, message: str) -> CommitOutcome:
        """`remove` for a caller that holds the writer lock."""
        path = self.project.tool_path(name)
        undo = Undo(path)
        previous_entry = self.registry.unregister(name)
        try:
            undo.delete()
            outcome = await self.commit({self.project.relative(path): None}, message)
        except PROJECT_FAILURES as exc:
            try:
                undo.restore()
            finally:
                self.registry.restore_entry(name, previous_entry)
            raise PipelineError("commit", f"removing {name} failed; the file is as it was: {failure_reason(exc)}") from exc
        undo.discard()
        return outcome

    async def commit(self, changes: dict[str, bytes | None], message: str) -> CommitOutcome:
        """Commit catalog paths in a worker thread (git takes tens of ms); deferrals are outcomes, not errors."""
        changes = {**self.untracked_gitignore(), **changes}
        outcome = await asyncio.to_thread(self.git.commit, changes, message)
        self.last_commit_note = outcome.message
        self.last_deferred_reason = outcome.deferred_reason
        return outcome

    def untracked_gitignore(self) -> dict[str, bytes]:
        """`.agent/.gitignore` joins the first catalog commit, so local state never shows up as untracked."""
        if self._gitignore_done:
            return {}
        path = self.project.agent_dir / ".gitignore"
        rel = self.project.relative(path)
        data = read_bytes_or_none(path)
        try:
            committed = self.git.show(rel, "HEAD")
        except ValueError:
            committed = None
        if committed is not None:
            self._gitignore_done = True
            return {}
        if data is None:  # in a repository the rules live in info/exclude; the committed copy is for teammates
            data = AGENT_GITIGNORE.encode("utf-8")
            atomic_write(path, data)
        return {rel: data}

def writable_folder(folder: Path) -> bool:
    """Whether `folder` exists or can be made, and can be written."""
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return os.access(folder, os.W_OK)


def interpret_inspection(run: RunResult, timeout_s: float) -> dict[str, Any]:
    """Turn the sandbox's RunResult of the inspector into its result dict, or a PipelineError."""
    if not run.ok:
        if run.error_kind == ERROR_TIMEOUT:
            raise PipelineError("inspect", f"importing or testing the tool did not finish within {timeout_s:g} s "
                                           "(an import or a test that hangs?)")
        detail = (run.error or run.stderr or "unknown error").strip().splitlines()
        raise PipelineError("inspect", f"the isolated import failed ({run.error_kind}): {detail[-1] if detail else ''}")
    value = run.value
    if run.value_is_repr or not isinstance(value, dict) or "ok" not in value:
        raise PipelineError("inspect", f"the inspector returned an unexpected value: {str(value)[:200]}")
    if not value["ok"]:
        error = value.get("error")
        if not isinstance(error, dict) or error.get("stage") not in STAGES or not isinstance(error.get("message"), str):
            raise PipelineError("inspect", f"the inspector reported a malformed error: {str(error)[:200]}")
        details = {"tests": value.get("tests", [])} if value.get("tests") else None
        line = error.get("line")
        raise PipelineError(error["stage"], error["message"], line if isinstance(line, int) else None, details=details)
    problem = result_problem(value)
    if problem is not None:
        raise PipelineError("inspect", f"the inspector's result is malformed (did the tool tamper with it?): {problem}")
    return value
