"""The Sandbox: every shell command, tool call, `run_python` snippet and tool self-test runs through `Sandbox.run`, in a
separate isolated process; what a run said of a write a read-only bind refused becomes a note (`refused_writes`)."""

from __future__ import annotations

import asyncio
import dataclasses
import re
import shutil
import stat
from pathlib import Path
from typing import Any, overload

from tui_agent.core.project import Project
from tui_agent.core.settings import Settings
from tui_agent.core.sandbox import protected
from tui_agent.core.sandbox.protected import GIT, GIT_READ_ONLY, REFUSED, protected_paths
from tui_agent.core.versioning import hookhold
from tui_agent.core.auditlog import AuditLog
from tui_agent.core.sandbox.dispatch import RunDispatch
from tui_agent.core.sandbox.launch import ALLOWED_ENV, probe_bubblewrap
from tui_agent.core.hostnames import configured_names
from tui_agent.core.tempfolders import owned_temp, sweep_once
from tui_agent.core.sandbox.policy import (BWRAP_FIX, ERROR_CANCELLED, ERROR_SANDBOX, TIER_BUBBLEWRAP, TIER_LEVELS,
                                           TIER_RLIMITS, WEAK_TIER_NETWORK, NetworkGrant, Program, RunResult,
                                           SandboxBridge, SandboxPolicy, SandboxUnavailable, ShellCommand, Snippet,
                                           ToolBatch, ToolCall, answer_result, check_level, to_run_result)
from tui_agent.core.network.proxy import PROXY_REFUSED
from tui_agent.core.sandbox.process import OutputListener
from tui_agent.core.sandbox.toolchain import Toolchain, discover, programs_from_venv
from tui_agent.core.sandbox.stopping import kill_base, pids_base
from tui_agent.core.sandbox.worker_guard import make_undumpable, seccomp_arch
from tui_agent.core.sandbox.writable_runs import WritableRuns, recover as recover_overlays

DEFAULT_WARM_WORKERS = 2


class Sandbox:
    """Runs agent code in sandboxed processes, one fresh process per run.

    Which pre-started worker a run takes is `RunDispatch`'s job; what a writable run is stamped with before and
    leaves behind after is `WritableRuns`'.
    """

    def __init__(self, project: Project, tier: str, policy: SandboxPolicy, warm_workers: int,
                 bubblewrap_problem: str | None) -> None:
        self.project = project
        self.tier = tier
        self.policy = policy
        self.warm_workers = warm_workers
        self.bubblewrap_problem = bubblewrap_problem
        self.network_names: tuple[str, ...] = ()
        """`[sandbox] network`: the only names a shell command granted the network reaches (empty: any public one)."""
        self.audit = AuditLog(project.runs_dir, on_notice=lambda note: self.notices.append(note))
        self.parent_undumpable = make_undumpable()
        self._scratch = owned_temp("sandbox")
        self._closed = False
        self.bridge: SandboxBridge | None = None
        """What `run_python` snippets may ask the runtime for (the session's MCP tools), set by the runtime."""
        self.notices: list[str] = []
        """Protected paths agent code created and tuiagent moved to `.agent/quarantine/` (also after a crash)."""
        self.runs = WritableRuns(project, tier, self._scratch, self.notices)
        """What writable runs wrote, until undo takes it (`take_run_writes`, `take_ignored_changes`), and whether they
        go through an overlay (`overlay_problem`)."""
        self.dispatch = RunDispatch(project, tier, policy, warm_workers, self._scratch, self.runs)
        self.toolchain: Toolchain | None = None
        """The project's toolchain (PATH, virtualenv, read-only folders, build variables) every worker sees."""

    @classmethod
    async def start(cls, project: Project, *, tier: str | None = None, policy: SandboxPolicy | None = None,
                    min_level: str | None = None, warm_workers: int = DEFAULT_WARM_WORKERS,
                    project_venv: bool = True, settings: Settings | None = None,
                    prestart: bool = True) -> "Sandbox":
        """Probe the strongest tier (or take the forced one), enforce `sandbox.min_level`, pre-start workers.

        `project_venv` False (a project not trusted yet) uses no virtualenv inside the project.
        `prestart` False leaves the warm workers to `prestart()` (or to the first runs).
        """
        settings = settings or project.load_settings()  # a restricted runtime passes its own (no committed grants)
        if min_level is None:
            min_level = settings.sandbox_min_level
        problem = await asyncio.to_thread(probe_bubblewrap)
        if tier is None:
            tier = TIER_BUBBLEWRAP if problem is None else TIER_RLIMITS
        elif tier == TIER_BUBBLEWRAP and problem is not None:
            raise SandboxUnavailable(f"the bubblewrap tier is not available: {problem}\n{BWRAP_FIX}")
        check_level(tier, min_level)
        project.ensure_layout()
        sandbox = cls(project, tier, policy or SandboxPolicy(), warm_workers, problem)
        sandbox.network_names = configured_names(settings.sandbox_network)
        sandbox.runs.told(await asyncio.to_thread(recover_overlays, project.root, project.cache_dir), [])
        # only then the temporary folders of tuiagent processes killed earlier: a killed run's overlay is in one, and
        # the recovery above applies (or quarantines) what it wrote first
        await asyncio.to_thread(sweep_once)
        toolchain, _ = await asyncio.gather(
            asyncio.to_thread(discover, project.root, extra_env=settings.sandbox_env,
                              extra_paths=settings.sandbox_paths, project_venv=project_venv),
            asyncio.to_thread(sandbox.runs.probe_overlay))
        sandbox.toolchain = sandbox.dispatch.toolchain = toolchain
        sandbox.runs.venv = toolchain.venv
        if prestart:
            sandbox.dispatch.warm.prestarted = True
            await sandbox.dispatch.warm.fill()
        return sandbox

    def prestart(self) -> None:
        """Fill the warm pool in the background, unless `start` did (the TUI calls it once a prompt typed at first
        paint has reached the model: they would share the CPU with it)."""
        if self.dispatch.warm.prestarted or self._closed:
            return
        self.dispatch.warm.prestarted = True
        self.dispatch.warm.schedule_refill()

    def prewarm(self, runs: int) -> None:
        """Have workers for `runs` offline read-only runs at once ready or booting now (a cold catalog open); those
        the warm pool does not keep are closed once idle."""
        if not self._closed:
            self.dispatch.prewarm(runs)

    @property
    def warning(self) -> str | None:
        """A visible warning when isolation is weaker than the strong tier."""
        if self.tier == TIER_BUBBLEWRAP:
            return None
        why = f" ({self.bubblewrap_problem})" if self.bubblewrap_problem else " (forced)"
        return f"Weak isolation: resource limits only, no filesystem or namespace isolation{why}."

    def network_grant(self) -> NetworkGrant:
        """What a shell command granted the network reaches: the names of `[sandbox] network`, or any public name."""
        return self.network_names or True

    def program_notes(self, command: str) -> list[str]:
        """What an approval of shell `command` must say: each program it runs from the project's virtualenv
        rather than the system."""
        if self.toolchain is None:
            return []
        return programs_from_venv(command, self.toolchain.path, self.toolchain.venv, self.project.root)

    @staticmethod
    def facts() -> dict[str, Any]:
        """What this machine and the package's rules give every run, read from the code that enforces them (the words
        about them are `tuiagent sandbox status`'s): each tier's level, the seccomp architecture (None without
        libseccomp), whether cgroup.kill stops a run and a pids cgroup caps it, the variables passed through, and what
        the apply step refuses."""
        specials = (stat.S_IFIFO, stat.S_IFSOCK, stat.S_IFCHR, stat.S_IFBLK)
        return {"tier_levels": dict(TIER_LEVELS), "seccomp": seccomp_arch(), "cgroup_kill": kill_base() is not None,
                "pids_cgroup": pids_base() is not None, "allowed_env": list(ALLOWED_ENV),
                "apply_refuses": {"git": protected.GIT, "git_read_only": list(protected.GIT_READ_ONLY),
                                  "nested_repository": protected.nested_repository(f"sub/{protected.GIT}"),
                                  "setid": protected.setid_words(protected.SETID_BITS),
                                  "special_files": sorted({kind for mode in specials
                                                           if (kind := protected.special_kind(mode)) is not None})}}

    @overload
    async def run(self, program: ToolBatch, policy: SandboxPolicy | None = None, *,
                  on_output: OutputListener | None = None) -> list[RunResult]: ...

    @overload
    async def run(self, program: ShellCommand | ToolCall | Snippet, policy: SandboxPolicy | None = None, *,
                  on_output: OutputListener | None = None) -> RunResult: ...

    async def run(self, program: Program, policy: SandboxPolicy | None = None, *,
                  on_output: OutputListener | None = None) -> RunResult | list[RunResult]:
        """Run `program` in a fresh sandboxed process under `policy` (the sandbox's default without one) and
        record it in the audit log; `on_output` gets each chunk of its output while it runs (a shell command's and
        a snippet's). A batch gives one result per call (each call's limits are the policy's); a cancelled batch
        gives each call its cancelled result, a batch that failed otherwise raises SandboxUnavailable."""
        if isinstance(program, ToolBatch):
            return await self._run_batch(program, policy)
        request = program.request()
        bridge = self.bridge if request["op"] == "exec" else None
        if bridge is not None:
            request["bridge_tools"] = bridge.modules()
        live = on_output if request["op"] in ("exec", "shell") else None
        result = await self._run(request, policy, bridge=bridge, on_output=live)
        self.audit.record(result=result, **program.audit())
        return self._shell_report(result) if isinstance(program, ShellCommand) else result

    @staticmethod
    def _shell_report(result: RunResult) -> RunResult:
        """A command's report is the value; what the network proxy refused leaves the run's stderr for the report's
        `network_refused` (the command's own stderr is in the report and never mixed with it)."""
        if not result.ok or not isinstance(result.value, dict):
            return result
        lines = result.stderr.splitlines(keepends=True)
        refused = [line[len(PROXY_REFUSED):].rstrip("\n") for line in lines if line.startswith(PROXY_REFUSED)]
        report = {**result.value, "network_refused": list(dict.fromkeys(refused))}
        rest = "".join(line for line in lines if not line.startswith(PROXY_REFUSED))
        return dataclasses.replace(result, value=report, stderr=rest)

    async def _run_batch(self, batch: ToolBatch, policy: SandboxPolicy | None) -> list[RunResult]:
        """One RunResult per call of a batched run."""
        calls = batch.calls
        effective = policy or self.policy
        request = batch.request(effective.timeout_s)
        batch_policy = effective.with_(timeout_s=effective.timeout_s * len(calls) + 5)  # cpu_s: each child starts at 0
        result = await self._run(request, batch_policy)
        if result.error_kind == ERROR_CANCELLED:
            results = [result] * len(calls)
        else:
            answers = result.value if result.ok and not result.value_is_repr else None
            if not isinstance(answers, list) or len(answers) != len(calls) or not all(isinstance(a, dict) for a in answers):
                raise SandboxUnavailable(f"the batched run failed: {result.error_kind}: {(result.error or '')[-300:]}")
            results = [answer_result(answer, self.tier) for answer in answers]
        self.audit.record_many([dict(result=one, **call.audit()) for call, one in zip(calls, results, strict=True)])
        return results

    async def cancel_running(self) -> None:
        """Kill every running sandboxed process tree; their calls return error_kind "cancelled"."""
        await self.dispatch.cancel_running()

    async def aclose(self) -> None:
        self._closed = True
        await self.dispatch.aclose()
        await self.runs.aclose()
        shutil.rmtree(self._scratch, ignore_errors=True)

    async def _run(self, request: dict[str, Any], policy: SandboxPolicy | None,
                   bridge: SandboxBridge | None = None, on_output: OutputListener | None = None) -> RunResult:
        if self._closed:
            raise SandboxUnavailable("the sandbox is closed")
        effective = policy or self.policy
        if effective.network and self.tier != TIER_BUBBLEWRAP:  # no namespace: the grant would be the host's network
            return answer_result({"ok": False, "error": WEAK_TIER_NETWORK, "error_kind": ERROR_SANDBOX}, self.tier)
        request["policy"] = effective.to_dict()
        request["tool_dirs"] = [] if "tool_paths" in request else [str(self.project.tools_dir)]
        writable = self.runs.project_writable(effective)
        attributed = self.runs.attributed(effective)
        if effective.project_writable:  # before the run: a commit made while it runs must not run hooks either
            self._hold_hooks(request)
        # through an overlay the harvest after the run is the one change capture; without one the run is fenced
        lower = await asyncio.to_thread(self.runs.lower) if attributed else None
        fence = await asyncio.to_thread(self.runs.fence, effective) if writable and not attributed else None
        swept: list[str] = []
        try:
            outcome, applied = await self.dispatch.run(request, effective, attributed, bridge, on_output, lower)
            swept += applied
        finally:
            if fence is not None:
                swept += await asyncio.to_thread(self.runs.unfence, fence)
            if effective.project_writable:  # again: on the fallback tier the run itself could remove the record
                self._hold_hooks(request)
        result = to_run_result(outcome, effective, self.tier)
        if writable and self.tier == TIER_BUBBLEWRAP:
            swept += self.runs.told(refused_writes(self.project.root, result, git_commits=attributed), [])
        # tuiagent's notes about the run (quarantined paths, ignored files, kept files) on its stderr
        result = dataclasses.replace(result, stderr=result.stderr + "".join(f"[tuiagent] {note}\n" for note in swept))
        if outcome.start_failed:  # not the code's failure: nothing is recorded against a tool
            raise SandboxUnavailable(result.error or "the sandbox could not start")
        return result

    def _hold_hooks(self, request: dict[str, Any]) -> None:
        """Agent code may change files the user's git hooks run: catalog commits with hooks wait for the person."""
        if self.project.outside_git:
            return  # no repository, no catalog commits, no hooks (and nothing may be written to the folder)
        what = {"call": f"a call of {request.get('module')}", "exec": "run_python or run_shell", "shell": "run_shell",
                "script": f"sandbox run {Path(str(request.get('path', ''))).name}"}.get(str(request.get("op")), "agent code")
        warning = hookhold.hold(self.project.root, f"{what} with the project writable")
        if warning:
            self.notices.append(warning)


REFUSALS = ("read-only file system", "device or resource busy")
"""How a write to a read-only bind fails: in place, or by renaming a new version over it (git's lock files)."""
MAX_NOTES = 5

_WHY_GIT_INSIDE = ("git's config, hooks and info/ decide what git runs on your machine: they stay read-only even for "
                   "an approved run (the rest of .git, what a commit needs, is writable)")
_WHY_GIT = ("git's folder is read-only for this run: only a run whose writes go through an overlay (see `tuiagent "
            "sandbox status`) may commit, and then never change .git/config, hooks or info/")
_WHY = "a protected path (it decides what runs on your machine, or is tuiagent's own): read-only for agent code"


def refused_writes(root: Path, result: RunResult, *, git_commits: bool) -> list[str]:
    """One note per protected path a line of what the run said (`run_texts`) saying one of REFUSALS names;
    `git_commits`: the run could write what commits need in `.git`."""
    lines = [line for text in run_texts(result) if text for line in text.splitlines()
             if any(refusal in line.lower() for refusal in REFUSALS)]
    if not lines:  # the usual run: no protected path to list
        return []
    entries = sorted({*protected_paths(root), *(f"{GIT}/{name}" for name in GIT_READ_ONLY)},
                     key=len, reverse=True)
    named = (_named(line, entries, str(root)) for line in lines)
    notes = dict.fromkeys(f"{REFUSED}writing {entry} ({_why(entry, git_commits)})" for entry in named if entry is not None)
    return list(notes)[:MAX_NOTES]


def _named(line: str, entries: list[str], root: str) -> str | None:
    """The longest protected entry `line` names as a path (relative, or under the project's absolute path)."""
    text = line.replace(root.rstrip("/") + "/", "")
    for entry in entries:
        if re.search(rf"(^|[\s'\"`(:=./]){re.escape(entry)}($|[\s'\"`):/,])", text):
            return entry
    return None


def _why(entry: str, git_commits: bool) -> str:
    if entry.startswith(GIT + "/"):
        return _WHY_GIT_INSIDE if git_commits else _WHY_GIT
    if entry == GIT:
        return _WHY_GIT
    return _WHY


def run_texts(result: RunResult) -> list[str]:
    """What a run said: its output and error, and a shell command's own output (run_shell's report)."""
    texts = [result.stdout, result.stderr, result.error or ""]
    if isinstance(result.value, dict):
        texts += [str(result.value.get(name, "")) for name in ("stdout", "stderr")]
    return texts
