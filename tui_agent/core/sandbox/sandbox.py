"""The Sandbox: every tool call, `run_python` snippet and tool self-test runs through it, in a separate isolated process."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tui_agent.core.project import Project, Settings
from tui_agent.core.sandbox import (ignored, ignored_watch, lowerstate, overlay as overlays, overlay_records, protected,
                                    quarantine, tiers)
from tui_agent.core.sandbox.attribution import PER_CALL_ONLY, RunWrites, collect, writes_of
from tui_agent.core.versioning import hookhold
from tui_agent.core.sandbox.audit import AuditLog
from tui_agent.core.sandbox.bridge import SandboxBridge
from tui_agent.core.sandbox.describe import describe_tier
from tui_agent.core.sandbox.forkpool import ForkPool
from tui_agent.core.sandbox.forkserver import ForkServerError, fork_servers_supported
from tui_agent.core.sandbox.outcome import BWRAP_FIX, answer_result, to_run_result, with_notes
from tui_agent.core.sandbox.policy import (
    TIER_BUBBLEWRAP,
    TIER_RLIMITS,
    RunResult,
    SandboxPolicy,
    SandboxUnavailable,
    check_level,
)
from tui_agent.core.sandbox.process import Outcome, OutputListener, Worker
from tui_agent.core.sandbox.toolchain import Toolchain, discover
from tui_agent.core.sandbox.venvs import programs_from_venv
from tui_agent.core.sandbox.warmpool import WarmPool
from tui_agent.core.sandbox.worker_guard import make_undumpable

DEFAULT_WARM_WORKERS = 2
KEPT_RUN_WRITES = 256


class Sandbox:
    """Runs agent code in sandboxed processes, one fresh process per run.

    Offline runs under bubblewrap (with per-run cgroups) are forked from warm fork servers (pre-imported
    interpreters inside the sandbox); network runs, and every run on a machine without them, get a fresh
    pre-started worker.
    """

    def __init__(self, project: Project, tier: str, policy: SandboxPolicy, warm_workers: int,
                 bubblewrap_problem: str | None, fork_servers: bool = True) -> None:
        self.project = project
        self.tier = tier
        self.policy = policy
        self.warm_workers = warm_workers
        self.bubblewrap_problem = bubblewrap_problem
        self.audit = AuditLog(project.runs_dir)
        self.parent_undumpable = make_undumpable()
        self._scratch = Path(tempfile.mkdtemp(prefix="tuiagent-sandbox-"))
        self.warm = WarmPool(project.root, warm_workers, self._spawn, self._warm_kinds,
                             lambda: self._attributed(self.policy.with_(project_writable=True)))
        self._running: set[Any] = set()
        """Workers and fork servers running a request (what `cancel_running` kills)."""
        self._closed = False
        self.fork_pool: ForkPool | None = (ForkPool(project.root, self._scratch, policy.processes)
                                           if fork_servers and fork_servers_supported(tier) else None)
        self.fork_problem: str | None = None
        """Why runs went back to fresh workers (a fork server failed to start), or None."""
        self._prestart: asyncio.Task[None] | None = None
        self._cancels = 0
        """How many times `cancel_running` was called: a run waiting for a fork server notices one it missed."""
        self.toolchain: Toolchain | None = None
        """The project's toolchain (PATH, virtualenv, read-only folders, build variables) every worker sees."""
        self.bridge: SandboxBridge | None = None
        """What `run_python` snippets may ask the runtime for (the session's MCP tools), set by the runtime."""
        self.notices: list[str] = []
        """Protected paths agent code created and tuiagent moved to `.agent/quarantine/` (also after a crash)."""
        self.ignored_changes: list[ignored.IgnoredChange] = []
        """Ignored files writable runs changed, until the undo journal takes them (`take_ignored_changes`)."""
        self.overlay_problem: str | None = PER_CALL_ONLY if tier != TIER_BUBBLEWRAP else None
        """Why writable runs are not mounted as overlays (their writes not attributed), or None."""
        self._removals: set[asyncio.Future[None]] = set()
        self._overlays: set[overlays.OverlayDirs] = set()
        """Overlays recorded for workers not finished yet (a warm worker discarded unused is forgotten at `aclose`)."""
        """Overlay folders of finished runs being deleted in the background (`aclose` waits for them)."""
        self._loop = asyncio.get_running_loop()
        self.run_writes: list[RunWrites] = []
        """What each writable run wrote, until the undo journal takes it (`take_run_writes`)."""

    @classmethod
    async def start(cls, project: Project, *, tier: str | None = None, policy: SandboxPolicy | None = None,
                    min_level: str | None = None, warm_workers: int = DEFAULT_WARM_WORKERS,
                    fork_servers: bool = True, project_venv: bool = True,
                    settings: Settings | None = None) -> "Sandbox":
        """Probe the strongest tier (or take the forced one), enforce `sandbox.min_level`, pre-start workers.

        `fork_servers` False makes every run start a fresh sandbox (the baseline the benchmarks compare with).
        `project_venv` False (a project not trusted yet) uses no virtualenv inside the project.
        """
        settings = settings or project.load_settings()  # a restricted runtime passes its own (no committed grants)
        if min_level is None:
            min_level = settings.sandbox_min_level
        problem = await asyncio.to_thread(tiers.probe_bubblewrap)
        if tier is None:
            tier = TIER_BUBBLEWRAP if problem is None else TIER_RLIMITS
        elif tier == TIER_BUBBLEWRAP and problem is not None:
            raise SandboxUnavailable(f"the bubblewrap tier is not available: {problem}\n{BWRAP_FIX}")
        check_level(tier, min_level)
        project.ensure_layout()
        sandbox = cls(project, tier, policy or SandboxPolicy(), warm_workers, problem, fork_servers)
        sandbox.notices += await asyncio.to_thread(overlay_records.recover, project.root, project.cache_dir)
        sandbox.notices += await asyncio.to_thread(quarantine.recover, project.root, project.cache_dir / "sweeps")
        sandbox.toolchain, overlay_problem = await asyncio.gather(
            asyncio.to_thread(discover, project.root, extra_env=settings.sandbox_env,
                              extra_paths=settings.sandbox_paths, project_venv=project_venv),
            asyncio.to_thread(sandbox._probe_overlay) if tier == TIER_BUBBLEWRAP else asyncio.sleep(0, PER_CALL_ONLY))
        if sandbox.overlay_problem is None:
            sandbox.overlay_problem = overlay_problem
        if sandbox.fork_pool is not None:
            sandbox.fork_pool.toolchain = sandbox.toolchain
            if warm_workers > 0:
                sandbox._prestart_fork_server(project_writable=False)
        await sandbox.warm.fill()
        return sandbox

    def _probe_overlay(self) -> str | None:
        if not overlays.usable_paths(self.project.root, self._scratch):
            return f"the project path has a character an overlay mount cannot carry; {PER_CALL_ONLY}"
        problem = overlays.probe(self._scratch)
        return f"{problem}; {PER_CALL_ONLY}" if problem else None

    def _prestart_fork_server(self, *, project_writable: bool) -> None:
        """Boot a fork server in the background (read-only: catalog validation and most tool calls use it)."""
        pool = self.fork_pool
        assert pool is not None

        async def boot() -> None:
            try:
                pool.release(await pool.acquire(project_writable))
            except (ForkServerError, OSError) as error:
                self._fork_failed(error)

        self._prestart = asyncio.get_running_loop().create_task(boot())

    def prewarm(self, runs: int) -> None:
        """Have fork servers for `runs` offline read-only runs at once booting now (a cold catalog open)."""
        if self.fork_pool is not None and not self._closed:
            self.fork_pool.warm(False, runs)

    @property
    def warning(self) -> str | None:
        """A visible warning when isolation is weaker than the strong tier."""
        if self.tier == TIER_BUBBLEWRAP:
            return None
        why = f" ({self.bubblewrap_problem})" if self.bubblewrap_problem else " (forced)"
        return f"Weak isolation: resource limits only, no filesystem or namespace isolation{why}."

    def program_notes(self, command: str) -> list[str]:
        """What an approval of shell `command` must say: each program it runs from the project's virtualenv
        rather than the system."""
        if self.toolchain is None:
            return []
        return programs_from_venv(command, self.toolchain.path, self.toolchain.venv, self.project.root)

    def describe(self) -> dict[str, Any]:
        """The tier in force and what each protection covers (for `sandbox status` and the UI header)."""
        info = describe_tier(self.tier, self.policy, parent_undumpable=self.parent_undumpable)
        info["warning"] = self.warning
        info["bubblewrap_problem"] = self.bubblewrap_problem
        info["warm_workers"] = self.warm_workers
        info["fork_servers"] = self.fork_pool is not None
        info["fork_problem"] = self.fork_problem
        info["run_attribution"] = ("exact: writable runs see the project through an overlay, and only what they wrote "
                                   "is applied and undone" if self.overlay_problem is None else self.overlay_problem)
        info["protected_paths"] = protected.protected_paths(self.project.root)
        if self.toolchain is not None:
            info["toolchain"] = self.toolchain.describe(paths_hidden=self.tier == TIER_BUBBLEWRAP)
        return info

    async def call_function(self, *, module: str, function: str, kwargs: dict[str, Any],
                            module_path: Path | None = None, policy: SandboxPolicy | None = None,
                            label: str = "", version: str | None = None) -> RunResult:
        """Call `module.function(**kwargs)` in the sandbox; `module_path` loads a tool file as `module`."""
        request: dict[str, Any] = {
            "op": "call", "module": module, "function": function, "kwargs": kwargs,
            "module_path": str(module_path) if module_path else None,
            "own_files": [str(module_path)] if module_path else [],
        }
        result = await self._run(request, policy)
        self.audit.record(label=label or f"{module}.{function}", version=version, kind="call",
                          result=result, args=kwargs, module=module)
        return result

    async def call_each(self, *, module: str, function: str, calls: list[dict[str, Any]],
                        policy: SandboxPolicy | None = None, labels: list[str] | None = None) -> list[RunResult]:
        """`module.function(**kwargs)` for every kwargs in `calls` in ONE sandboxed run, each call in its own
        forked child with the run's limits (`policy.timeout_s` is per call); one RunResult per call.

        Raises SandboxUnavailable when the run itself failed (its RunResult says why); the caller may retry
        the calls one run each. The audit log gets one line per call, labelled from `labels`.
        """
        effective = policy or self.policy
        request: dict[str, Any] = {"op": "call_each", "module": module, "function": function, "calls": calls,
                                   "call_timeout_s": effective.timeout_s}
        batch_policy = effective.with_(timeout_s=effective.timeout_s * len(calls) + 5)  # cpu_s: each child starts at 0
        result = await self._run(request, batch_policy)
        answers = result.value if result.ok and not result.value_is_repr else None
        if not isinstance(answers, list) or len(answers) != len(calls) or not all(isinstance(a, dict) for a in answers):
            raise SandboxUnavailable(f"the batched run failed: {result.error_kind}: {(result.error or '')[-300:]}")
        results = [answer_result(answer, self.tier) for answer in answers]
        self.audit.record_many([
            dict(label=labels[index] if labels and index < len(labels) else f"{module}.{function}", version=None,
                 kind="call", result=one, args=kwargs, module=module)
            for index, (kwargs, one) in enumerate(zip(calls, results, strict=False))])
        return results

    async def run_python(self, code: str, *, policy: SandboxPolicy | None = None,
                         tool_paths: Mapping[str, str | Path] | None = None,
                         on_output: OutputListener | None = None) -> RunResult:
        """Run a snippet with every catalog tool importable by name; a final expression is the result value.

        `on_output` gets each chunk the snippet writes to its stdout while it runs (run_shell's live output).

        `tool_paths` (name → file, e.g. the catalog's last good versions) makes `import name` load exactly that file,
        the catalog's last good version, and nothing else from `.agent/tools/`. Without it the snippet imports
        whatever is in `.agent/tools/` on disk, broken or not.
        """
        request: dict[str, Any] = {"op": "exec", "code": code}
        if tool_paths is not None:
            request["tool_paths"] = {name: str(path) for name, path in tool_paths.items()}
        if self.bridge is not None:
            request["bridge_tools"] = self.bridge.modules()
        result = await self._run(request, policy, bridge=self.bridge, on_output=on_output)
        self.audit.record(label="run_python", version=None, kind="exec", result=result, code=code)
        return result

    async def run_file(self, path: Path, *, policy: SandboxPolicy | None = None) -> RunResult:
        """Run a Python file as `__main__`, the way agent code runs (cwd = the project)."""
        resolved = path.resolve()
        code = resolved.read_text(encoding="utf-8")
        request = {"op": "script", "path": str(resolved), "code": code, "own_files": [str(resolved)]}
        result = await self._run(request, policy)
        self.audit.record(label=f"file:{path}", version=None, kind="script", result=result, code=code)
        return result

    async def cancel_running(self) -> None:
        """Kill every running sandboxed process tree; their calls return error_kind "cancelled"."""
        self._cancels += 1
        await asyncio.gather(*(worker.cancel() for worker in list(self._running)))

    async def aclose(self) -> None:
        self._closed = True
        await self.warm.aclose()
        await self.cancel_running()
        if self.fork_pool is not None:
            await self.fork_pool.aclose()
        if self._prestart is not None:
            await asyncio.gather(self._prestart, return_exceptions=True)
        await self.warm.discard_all()
        await asyncio.gather(*self._removals, return_exceptions=True)
        for dirs in list(self._overlays):  # warm workers that never ran: their records would outlive this process
            self._overlays.discard(dirs)
            await asyncio.to_thread(overlay_records.finish, self.project.cache_dir, dirs)
        shutil.rmtree(self._scratch, ignore_errors=True)

    async def _run(self, request: dict[str, Any], policy: SandboxPolicy | None,
                   bridge: SandboxBridge | None = None, on_output: OutputListener | None = None) -> RunResult:
        if self._closed:
            raise SandboxUnavailable("the sandbox is closed")
        effective = policy or self.policy
        request["policy"] = effective.to_dict()
        request["tool_dirs"] = [] if "tool_paths" in request else [str(self.project.tools_dir)]
        writable = self._project_writable(effective)
        watched = await asyncio.to_thread(quarantine.watch, self.project.root) if writable else None
        record = quarantine.begin(self.project.root, watched, self.project.cache_dir / "sweeps") if watched is not None else None
        if effective.project_writable:  # before the run: a commit made while it runs must not run hooks either
            self._hold_hooks(request)
        attributed = self._attributed(effective)
        ignored_before, lower = (await asyncio.to_thread(self._before, effective, attributed)
                                 if effective.project_writable else (None, None))
        swept: list[str] = []
        try:
            outcome = None
            if (self.fork_pool is not None and not effective.network and not self._venv_writable(effective)
                    and not attributed):
                outcome = await self._run_forked(request, effective, bridge, on_output)
            if outcome is None:
                outcome, applied = await self._run_fresh(request, effective, writable, bridge, on_output, lower)
                swept += applied
        finally:
            if writable and not attributed:
                self._ran(RunWrites(False))
            if watched is not None:
                moved = quarantine.sweep(self.project.root, watched)
                quarantine.finish(record)
                self.notices += moved
                swept += moved
            if effective.project_writable:  # again: on the fallback tier the run itself could remove the record
                self._hold_hooks(request)
            if ignored_before is not None:
                changed, found = await asyncio.to_thread(ignored_watch.after, self.project.root, self._used_venv(),
                                                         ignored_before)
                self.ignored_changes += found
                self.notices += changed
                swept = swept + changed
        result = with_notes(to_run_result(outcome, effective, self.tier), swept)
        if outcome.start_failed:  # not the code's failure: nothing is recorded against a tool
            raise SandboxUnavailable(result.error or "the sandbox could not start")
        return result

    async def _run_fresh(self, request: dict[str, Any], policy: SandboxPolicy, writable: bool,
                         bridge: SandboxBridge | None, on_output: OutputListener | None = None,
                         lower: lowerstate.LowerState | None = None) -> tuple[Outcome, list[str]]:
        """The run in a fresh pre-started worker (network runs, writable runs through an overlay, or no fork server),
        and the notes about what of its writes was not applied; `lower`: the project's stamps taken before it."""
        attributed = self._attributed(policy)
        if self._venv_writable(policy):  # never a warm worker: those keep the virtualenv read-only
            worker = await self._spawn(policy.network, writable, attributed, venv_writable=True)
        else:
            worker = await self.warm.acquire(policy.network, writable, attributed)
        self._running.add(worker)
        since = time.time_ns()
        dirs = worker.overlay
        try:
            outcome = await worker.run(request, timeout_s=policy.timeout_s,
                                       output_bytes=policy.output_bytes, processes=policy.processes,
                                       bridge=bridge, on_output=on_output)
        except asyncio.CancelledError:
            await asyncio.shield(worker.cancel())  # a cancelled turn leaves no process of its own behind
            with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
                await asyncio.shield(asyncio.wait_for(worker.process.wait(), 2.0))
            with contextlib.suppress(asyncio.CancelledError):  # what the tree walk missed dies with the cgroup
                await asyncio.shield(worker.release_cgroup())
            if dirs is not None:  # what it wrote before the kill is applied (and undoable)
                self._collect(dirs, since, lower)
            raise
        finally:
            self._running.discard(worker)
            self._release_private_dirs(worker)
            self.warm.schedule_refill()
        if dirs is not None and outcome.start_failed and outcome.exit_code == overlays.MOUNT_FAILED:
            self._remove_later(dirs)
            self.overlay_problem = f"the project could not be mounted as an overlay; {PER_CALL_ONLY}"
            self._ran(RunWrites(False))
            return await self._run_fresh(request, policy, writable, bridge, on_output, lower)  # never started: safe
        if dirs is None:
            return outcome, []
        if not any(os.scandir(dirs.upper)):  # it wrote nothing (the usual read-mostly run): no thread hop
            self._ran(RunWrites(True))
            self._remove_later(dirs)
            return outcome, []
        return outcome, await asyncio.to_thread(self._collect, dirs, since, lower)

    def _collect(self, dirs: overlays.OverlayDirs, since: int, lower: lowerstate.LowerState | None) -> list[str]:
        """Apply what an overlay run wrote onto the project and record exactly that for undo (its notes returned)."""
        try:
            found = collect(dirs, self.project.root, self.project.cache_dir, since, lower)
        finally:
            self._loop.call_soon_threadsafe(self._remove_later, dirs)
        self._ran(writes_of(found))
        self.notices += found.notes
        return found.notes

    def _remove_later(self, dirs: overlays.OverlayDirs) -> None:
        """Deleting even empty folders takes milliseconds on a busy disk: not on the run's path."""
        self._overlays.discard(dirs)
        removal = self._loop.run_in_executor(None, overlay_records.finish, self.project.cache_dir, dirs)
        self._removals.add(removal)
        removal.add_done_callback(self._removals.discard)

    def _hold_hooks(self, request: dict[str, Any]) -> None:
        """Agent code may change files the user's git hooks run: catalog commits with hooks wait for the person."""
        if self.project.outside_git:
            return  # no repository, no catalog commits, no hooks (and nothing may be written to the folder)
        what = {"call": f"a call of {request.get('module')}", "exec": "run_python or run_shell",
                "script": f"sandbox run {Path(str(request.get('path', ''))).name}"}.get(str(request.get("op")), "agent code")
        warning = hookhold.hold(self.project.root, f"{what} with the project writable")
        if warning:
            self.notices.append(warning)

    async def _run_forked(self, request: dict[str, Any], policy: SandboxPolicy,
                          bridge: SandboxBridge | None, on_output: OutputListener | None = None) -> Outcome | None:
        """The run in a child of a warm fork server; None when no server could take it (a fresh worker will)."""
        pool = self.fork_pool
        assert pool is not None
        cancels = self._cancels
        try:
            server = await pool.acquire(self._project_writable(policy))
        except (ForkServerError, OSError) as error:
            self._fork_failed(error)
            return None
        self._running.add(server)
        try:
            outcome = await server.run(request, timeout_s=policy.timeout_s, output_bytes=policy.output_bytes,
                                       processes=policy.processes, cancelled=cancels != self._cancels, bridge=bridge,
                                       on_output=on_output)
        except (ForkServerError, OSError) as error:
            pool.discard(server)  # the next run starts a new server
            if server.request_sent:  # never run a request twice: its child may have done part of it
                return Outcome(response=None, stdout=b"", stderr=b"", stdout_total=0, stderr_total=0, exit_code=None,
                               cancelled=cancels != self._cancels,
                               protocol_error=f"the sandboxed fork server failed during the run ({error}); not run again")
            return None  # it never reached a child: a fresh worker runs it
        except asyncio.CancelledError:
            await asyncio.shield(server.cancel())  # a cancelled turn leaves no process of its own behind
            pool.discard(server)
            raise
        finally:
            self._running.discard(server)
        if outcome.exit_code is None and not server.alive:
            pool.discard(server)  # the server died under this run: the next one starts a new server
        else:
            pool.release(server)
        return outcome

    def _fork_failed(self, error: BaseException) -> None:
        """A fork server could not start or serve: every later run uses a fresh worker (and says why)."""
        self.fork_problem = f"fork server unavailable, each run starts a fresh sandbox: {error}"
        pool, self.fork_pool = self.fork_pool, None
        if pool is not None:
            asyncio.get_running_loop().create_task(pool.aclose())

    def _project_writable(self, policy: SandboxPolicy) -> bool:
        """Only bubblewrap can make the project read-only; the rlimits tier runs every call the same way."""
        return policy.project_writable or self.tier != TIER_BUBBLEWRAP

    def _attributed(self, policy: SandboxPolicy) -> bool:
        """Whether this run's writes are known exactly: a writable bubblewrap run through an overlay."""
        return self.tier == TIER_BUBBLEWRAP and policy.project_writable and self.overlay_problem is None

    def _used_venv(self) -> Path | None:
        return self.toolchain.venv if self.toolchain is not None else None

    def _before(self, policy: SandboxPolicy, attributed: bool) -> tuple[ignored.IgnoredState,
                                                                         lowerstate.LowerState | None]:
        """Before a writable run: its ignored files, and (through an overlay) the project's stamps as it starts."""
        ignored_state = self._ignored_before(policy)
        return ignored_state, lowerstate.take(self.project.root, ignored_state) if attributed else None

    def _ignored_before(self, policy: SandboxPolicy) -> ignored.IgnoredState:
        read_only = self.tier == TIER_BUBBLEWRAP and not self._venv_writable(policy)
        return ignored_watch.before(self.project.root, self._used_venv(), venvs_read_only=read_only)

    def _ran(self, writes: RunWrites) -> None:
        """Keep what a run wrote until undo takes it; nobody taking them (no undo outside git) keeps only the last
        ones, behind a marker that makes their call unattributed (undo then counts every change as the agent's)."""
        self.run_writes.append(writes)
        if len(self.run_writes) > KEPT_RUN_WRITES:
            self.run_writes = [RunWrites(False), *self.run_writes[-KEPT_RUN_WRITES + 1:]]

    def take_run_writes(self) -> list[RunWrites]:
        """What each writable run wrote since the last call (the undo journal attributes each call's changes)."""
        found, self.run_writes = self.run_writes, []
        return found

    def take_ignored_changes(self) -> list[ignored.IgnoredChange]:
        """The ignored files changed by writable runs since the last call (the undo journal records them per turn)."""
        found, self.ignored_changes = self.ignored_changes, []
        return found

    def _venv_writable(self, policy: SandboxPolicy) -> bool:
        return policy.venv_writable and self._project_writable(policy) and self.tier == TIER_BUBBLEWRAP

    async def _spawn(self, network: bool, project_writable: bool, overlay: bool, venv_writable: bool = False) -> Worker:
        dirs = overlays.prepare(self._scratch) if overlay else None
        if dirs is not None:
            self._overlays.add(dirs)
            await asyncio.to_thread(overlay_records.begin, self.project.cache_dir, dirs)
        try:
            return await Worker.spawn(self.project.root, tier=self.tier, network=network, scratch=self._scratch,
                                      processes=self.policy.processes, project_writable=project_writable,
                                      toolchain=self.toolchain, venv_writable=venv_writable, overlay=dirs)
        except BaseException:
            if dirs is not None:
                self._overlays.discard(dirs)
                overlay_records.finish(self.project.cache_dir, dirs)
            raise

    def _warm_kinds(self) -> tuple[bool, ...]:
        """Which warm pools (by project writable) fresh workers are kept in: offline runs are forked from fork servers,
        except writable runs through an overlay (a fresh mount per run: it caches what it looked up)."""
        if self.fork_pool is None:
            return (True, False)
        return (True,) if self.overlay_problem is None and self.tier == TIER_BUBBLEWRAP else ()

    def _release_private_dirs(self, worker: Worker) -> None:
        if worker.private_dirs:
            shutil.rmtree(worker.private_dirs, ignore_errors=True)
