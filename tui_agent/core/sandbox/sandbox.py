"""The Sandbox: every tool call, `run_python` snippet and tool self-test runs through it, in a separate isolated process."""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from tui_agent.core.project import Project
from tui_agent.core.sandbox import protected, tiers
from tui_agent.core.sandbox.audit import AuditLog
from tui_agent.core.sandbox.bridge import SandboxBridge
from tui_agent.core.sandbox.describe import describe_tier
from tui_agent.core.sandbox.outcome import to_run_result
from tui_agent.core.sandbox.policy import (
    TIER_BUBBLEWRAP,
    TIER_RLIMITS,
    RunResult,
    SandboxPolicy,
    SandboxUnavailable,
    check_level,
)
from tui_agent.core.sandbox.process import Worker
from tui_agent.core.sandbox.toolchain import Toolchain, discover
from tui_agent.core.sandbox.worker_guard import make_undumpable

DEFAULT_WARM_WORKERS = 2


class Sandbox:
    """Runs agent code in pre-started sandboxed interpreters, one fresh process per run."""

    def __init__(self, project: Project, tier: str, policy: SandboxPolicy, warm_workers: int,
                 bubblewrap_problem: str | None) -> None:
        self.project = project
        self.tier = tier
        self.policy = policy
        self.warm_workers = warm_workers
        self.bubblewrap_problem = bubblewrap_problem
        self.audit = AuditLog(project.runs_dir)
        self.parent_undumpable = make_undumpable()
        self._scratch = Path(tempfile.mkdtemp(prefix="tuiagent-sandbox-"))
        self._warm: dict[bool, list[Worker]] = {True: [], False: []}
        """Pre-started workers without network, by whether the project is writable for them."""
        self._kept_warm: set[bool] = {True}
        """Pools the refill keeps full; the read-only pool joins after its first use (catalog validation)."""
        self._running: set[Worker] = set()
        self._refill_task: asyncio.Task[None] | None = None
        self._closed = False
        self.toolchain: Toolchain | None = None
        """The project's toolchain (PATH, virtualenv, read-only folders, build variables) every worker sees."""
        self.bridge: SandboxBridge | None = None
        """What `run_python` snippets may ask the runtime for (the session's MCP tools), set by the runtime."""

    @classmethod
    async def start(cls, project: Project, *, tier: str | None = None, policy: SandboxPolicy | None = None,
                    min_level: str | None = None, warm_workers: int = DEFAULT_WARM_WORKERS) -> "Sandbox":
        """Probe the strongest tier (or take the forced one), enforce `sandbox.min_level`, pre-start workers."""
        settings = project.load_settings()
        if min_level is None:
            min_level = settings.sandbox_min_level
        problem = await asyncio.to_thread(tiers.probe_bubblewrap)
        if tier is None:
            tier = TIER_BUBBLEWRAP if problem is None else TIER_RLIMITS
        elif tier == TIER_BUBBLEWRAP and problem is not None:
            raise SandboxUnavailable(f"the bubblewrap tier is not available: {problem}")
        check_level(tier, min_level)
        project.ensure_layout()
        sandbox = cls(project, tier, policy or SandboxPolicy(), warm_workers, problem)
        sandbox.toolchain = await asyncio.to_thread(discover, project.root, extra_env=settings.sandbox_env,
                                                    extra_paths=settings.sandbox_paths)
        await sandbox._fill()
        return sandbox

    @property
    def warning(self) -> str | None:
        """A visible warning when isolation is weaker than the strong tier."""
        if self.tier == TIER_BUBBLEWRAP:
            return None
        why = f" ({self.bubblewrap_problem})" if self.bubblewrap_problem else " (forced)"
        return f"Weak isolation: resource limits only, no filesystem or namespace isolation{why}."

    def describe(self) -> dict[str, Any]:
        """The tier in force and what each protection covers (for `sandbox status` and the UI header)."""
        info = describe_tier(self.tier, self.policy, parent_undumpable=self.parent_undumpable)
        info["warning"] = self.warning
        info["bubblewrap_problem"] = self.bubblewrap_problem
        info["warm_workers"] = self.warm_workers
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

    async def run_python(self, code: str, *, policy: SandboxPolicy | None = None,
                         tool_paths: Mapping[str, str | Path] | None = None) -> RunResult:
        """Run a snippet with every catalog tool importable by name; a final expression is the result value.

        `tool_paths` (name → file, e.g. the catalog's last good versions) makes `import name` load exactly that file,
        the catalog's last good version, and nothing else from `.agent/tools/`. Without it the snippet imports
        whatever is in `.agent/tools/` on disk, broken or not.
        """
        request: dict[str, Any] = {"op": "exec", "code": code}
        if tool_paths is not None:
            request["tool_paths"] = {name: str(path) for name, path in tool_paths.items()}
        if self.bridge is not None:
            request["bridge_tools"] = self.bridge.modules()
        result = await self._run(request, policy, bridge=self.bridge)
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
        await asyncio.gather(*(worker.cancel() for worker in list(self._running)))

    async def aclose(self) -> None:
        self._closed = True
        if self._refill_task is not None:
            # Not cancelled: cancelling a half-created subprocess can hang; _fill stops after the current spawn.
            try:
                await self._refill_task
            except Exception:  # a failed refill spawn only means fewer warm workers to close
                pass
        await self.cancel_running()
        warm = [worker for pool in self._warm.values() for worker in pool]
        self._warm = {True: [], False: []}
        await asyncio.gather(*(worker.discard() for worker in warm), return_exceptions=True)
        shutil.rmtree(self._scratch, ignore_errors=True)

    async def _run(self, request: dict[str, Any], policy: SandboxPolicy | None,
                   bridge: SandboxBridge | None = None) -> RunResult:
        if self._closed:
            raise SandboxUnavailable("the sandbox is closed")
        effective = policy or self.policy
        request["policy"] = effective.to_dict()
        request["tool_dirs"] = [] if "tool_paths" in request else [str(self.project.tools_dir)]
        writable = self._project_writable(effective)
        absent_before = protected.unbound(self.project.root) if writable else {}
        swept: list[str] = []
        worker = await self._acquire(effective.network, writable)
        self._running.add(worker)
        try:
            outcome = await worker.run(request, timeout_s=effective.timeout_s,
                                       output_bytes=effective.output_bytes, processes=effective.processes,
                                       bridge=bridge)
        except asyncio.CancelledError:
            await asyncio.shield(worker.cancel())  # a cancelled turn leaves no process of its own behind
            raise
        finally:
            self._running.discard(worker)
            self._release_private_dirs(worker)
            self._schedule_refill()
            if absent_before:
                swept = protected.sweep_created(self.project.root, absent_before)
        return self._with_notes(to_run_result(outcome, effective, self.tier), swept)

    @staticmethod
    def _with_notes(result: RunResult, notes: list[str]) -> RunResult:
        if not notes:
            return result
        return dataclasses.replace(result, stderr=result.stderr + "".join(f"[tuiagent] {note}\n" for note in notes))

    def _project_writable(self, policy: SandboxPolicy) -> bool:
        """Only bubblewrap can make the project read-only; the rlimits tier runs every call the same way."""
        return policy.project_writable or self.tier != TIER_BUBBLEWRAP

    async def _acquire(self, network: bool, project_writable: bool) -> Worker:
        worker: Worker | None = None
        if not network:
            self._kept_warm.add(project_writable)
            layout = tiers.project_layout(self.project.root)
            pool = self._warm[project_writable]
            while pool:
                candidate = pool.pop(0)
                if candidate.alive and candidate.layout == layout:
                    worker = candidate
                    break
                asyncio.get_running_loop().create_task(candidate.discard())
        if worker is None:
            worker = await self._spawn(network, project_writable)
        return worker

    async def _spawn(self, network: bool, project_writable: bool = True) -> Worker:
        return await Worker.spawn(self.project.root, tier=self.tier, network=network, scratch=self._scratch,
                                  processes=self.policy.processes, project_writable=project_writable,
                                  toolchain=self.toolchain)

    async def _fill(self) -> None:
        for project_writable in (True, False):
            pool = self._warm[project_writable]
            while not self._closed and project_writable in self._kept_warm and len(pool) < self.warm_workers:
                pool.append(await self._spawn(False, project_writable))

    def _schedule_refill(self) -> None:
        if self._closed or (self._refill_task is not None and not self._refill_task.done()):
            return
        self._refill_task = asyncio.get_running_loop().create_task(self._fill())

    def _release_private_dirs(self, worker: Worker) -> None:
        if worker.private_dirs:
            shutil.rmtree(worker.private_dirs, ignore_errors=True)
