"""Sandbox value types: what `Sandbox.run` runs (a shell command, a tool call, a code snippet or script, a batch of
tool calls), the limits it runs under, a run's raw outcome and the RunResult it becomes, tier levels, the
unavailable error, and what the runtime offers run_python's snippets (SandboxBridge)."""

from __future__ import annotations

import signal
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from typing import Any, Protocol, Union

from tui_agent.core.errors import TuiAgentError

TIER_BUBBLEWRAP = "bubblewrap"
TIER_RLIMITS = "rlimits"
TIER_LEVELS: dict[str, int] = {TIER_RLIMITS: 0, TIER_BUBBLEWRAP: 1}
"""Isolation tiers, weakest first; `sandbox.min_level` names one of them."""

NetworkGrant = Union[bool, tuple[str, ...]]
"""False: no network; True: any public host name; a tuple: those names (and `*.` wildcards) only (network/policy.py)."""

ERROR_EXCEPTION = "exception"
ERROR_TIMEOUT = "timeout"
ERROR_LIMIT = "limit"
ERROR_SANDBOX = "sandbox"
ERROR_CANCELLED = "cancelled"


class SandboxUnavailable(TuiAgentError, RuntimeError):
    """The requested isolation tier cannot be provided (or is below `sandbox.min_level`)."""


class SandboxBridge(Protocol):
    """What the runtime offers to sandboxed code: importable module names and the calls behind them."""

    def modules(self) -> dict[str, str]:
        """Importable name → a one-line description (the module's docstring)."""
        ...

    async def call(self, name: str, arguments: dict[str, Any]) -> Any:
        """The tool's value; raises an exception whose message goes back to the snippet."""
        ...


@dataclass(frozen=True)
class SandboxPolicy:
    """Limits for one run. Sizes in MiB, times in seconds; `network` False cuts every socket, True reaches any
    public host name through the host's proxy, a tuple of names only those (network/policy.py).

    `project_writable` False makes the whole project read-only for the run (bubblewrap tier; a private /tmp
    stays writable): the catalog runs a tool's import and its own tests that way. The rlimits tier cannot
    enforce it and `tuiagent sandbox status` says so.
    """

    timeout_s: float = 30.0
    cpu_s: int = 30
    memory_mb: int = 1024
    file_size_mb: int = 64
    open_files: int = 256
    processes: int = 64
    output_bytes: int = 64_000
    network: NetworkGrant = False
    project_writable: bool = True
    venv_writable: bool = False
    """The project's virtualenv may change in this run (installing packages: its own approval); otherwise it is
    read-only even when the project is writable (bubblewrap), so a test cannot plant a .pth or sitecustomize in it."""

    def with_(self, **changes: Any) -> "SandboxPolicy":
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        network = list(self.network) if isinstance(self.network, tuple) else self.network
        return {**asdict(self), "network": network}


@dataclass(frozen=True)
class RunWrites:
    """One writable run: `attributed` when `paths` (project paths, relative, POSIX) are exactly what it created,
    changed or removed; `kept` are paths it also wrote that someone else changed meanwhile (theirs kept)."""

    attributed: bool
    paths: tuple[str, ...] = ()
    kept: tuple[str, ...] = ()
    aside: tuple[tuple[str, str], ...] = ()
    """(path, where the run's version is) for each of `kept` the run had changed rather than deleted."""


@dataclass(frozen=True)
class RunResult:
    """What one sandboxed run produced. `value` is JSON-compatible, or a repr string when `value_is_repr`."""

    ok: bool
    value: Any
    value_is_repr: bool
    error: str | None
    error_kind: str | None
    stdout: str
    stderr: str
    output_truncated: bool
    duration_ms: float
    files_read: tuple[str, ...]
    tier: str
    exit_code: int | None

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "files_read": list(self.files_read)}


def check_level(tier: str, min_level: str | None) -> None:
    """Raise SandboxUnavailable when `tier` is weaker than `min_level` (or either is unknown)."""
    if tier not in TIER_LEVELS:
        raise SandboxUnavailable(f"unknown sandbox tier {tier!r}; known: {', '.join(TIER_LEVELS)}")
    if min_level is None:
        return
    if min_level not in TIER_LEVELS:
        raise SandboxUnavailable(
            f"sandbox.min_level = {min_level!r} is not a tier; use one of: {', '.join(TIER_LEVELS)}"
        )
    if TIER_LEVELS[tier] < TIER_LEVELS[min_level]:
        raise SandboxUnavailable(
            f"sandbox tier {tier!r} is below sandbox.min_level = {min_level!r}; refusing to run agent code"
        )


@dataclass(frozen=True)
class ShellCommand:
    """`command` run by the shell (`bash -c`, `/bin/sh -c` without bash) as it is written, stopped after `timeout_s`.
    Of its output `keep_bytes` in all are kept (two thirds for stdout), each stream's head and tail; the result's
    value is the report: exit_code or signal (or timed_out), stdout, stderr, their sizes, cut_bytes, pipeline (each
    exit status of its last pipeline, with bash), network_refused (what the proxy refused, apart from stderr)."""

    command: str
    timeout_s: float
    keep_bytes: int = 30_000

    def request(self) -> dict[str, Any]:
        """The worker's request for this command."""
        return {"op": "shell", "command": self.command, "command_timeout_s": self.timeout_s,
                "keep_bytes": self.keep_bytes}

    def audit(self) -> dict[str, Any]:
        """Its audit line's fields (AuditLog.record's keyword arguments but the result)."""
        return dict(label="run_shell", version=None, kind="shell", code=self.command)


@dataclass(frozen=True)
class ToolCall:
    """`module.function(**kwargs)`, the module loaded from `module_path` (else imported by name); `label` and
    `version` go to the audit log."""

    module: str
    function: str
    kwargs: dict[str, Any]
    module_path: str | None = None
    label: str = ""
    version: str | None = None

    def request(self) -> dict[str, Any]:
        return {"op": "call", "module": self.module, "function": self.function, "kwargs": self.kwargs,
                "module_path": self.module_path, "own_files": [self.module_path] if self.module_path else []}

    def audit(self) -> dict[str, Any]:
        return dict(label=self.label or f"{self.module}.{self.function}", version=self.version, kind="call",
                    args=self.kwargs, module=self.module)


@dataclass(frozen=True)
class Snippet:
    """Python code; a final expression is the value. `tool_paths` (name → file) makes `import name` load exactly
    that file and nothing else from `.agent/tools/`; `script_path` runs the code as that file's `__main__`."""

    code: str
    tool_paths: Mapping[str, str] | None = None
    script_path: str | None = None

    def request(self) -> dict[str, Any]:
        if self.script_path is not None:
            return {"op": "script", "path": self.script_path, "code": self.code, "own_files": [self.script_path]}
        request: dict[str, Any] = {"op": "exec", "code": self.code}
        if self.tool_paths is not None:
            request["tool_paths"] = {name: str(path) for name, path in self.tool_paths.items()}
        return request

    def audit(self) -> dict[str, Any]:
        if self.script_path is not None:
            return dict(label=f"file:{self.script_path}", version=None, kind="script", code=self.code)
        return dict(label="run_python", version=None, kind="exec", code=self.code)


@dataclass(frozen=True)
class ToolBatch:
    """Tool calls in ONE run, each in its own forked child with the run's limits (`timeout_s` is per call), in
    order: one result per call. Calls of one module's function imported by name share its import."""

    calls: tuple[ToolCall, ...] = field(default_factory=tuple)

    def request(self, call_timeout_s: float) -> dict[str, Any]:
        """One `call_each` request; calls of one module's function imported by name send only their arguments."""
        first = self.calls[0] if self.calls else None
        request: dict[str, Any]
        if first is not None and all(call.module_path is None and (call.module, call.function)
                                     == (first.module, first.function) for call in self.calls):
            request = {"op": "call_each", "module": first.module, "function": first.function,
                       "calls": [call.kwargs for call in self.calls]}
        else:
            request = {"op": "call_each", "calls": [{"module": call.module, "function": call.function,
                                                     "kwargs": call.kwargs, "module_path": call.module_path}
                                                    for call in self.calls],
                       "own_files": sorted({call.module_path for call in self.calls if call.module_path})}
        return {**request, "call_timeout_s": call_timeout_s}


Program = Union[ShellCommand, ToolCall, Snippet, ToolBatch]


@dataclass
class Outcome:
    """The raw facts of one run, before they become a RunResult."""

    response: dict[str, Any] | None = None
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_total: int = 0
    stderr_total: int = 0
    exit_code: int | None = None
    timed_out: bool = False
    cancelled: bool = False
    flooded: bool = False
    protocol_error: str | None = None
    duration_ms: float = 0.0
    start_failed: bool = False
    """The sandbox exited before its interpreter started (bubblewrap refused to start): stderr says why."""


STDERR_TAIL = 2000
BWRAP_FIX = ("How to fix: check that `bwrap --unshare-pid --ro-bind / / true` works for this user (unprivileged "
             "user namespaces may be off: sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04+ "
             "kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap), or run with "
             "`--sandbox-tier rlimits` (`--tier rlimits` for `tuiagent sandbox run`): resource limits only, "
             "no filesystem isolation")


def to_run_result(outcome: Outcome, policy: SandboxPolicy, tier: str) -> RunResult:
    def shown(data: bytes, total: int, stream: str) -> str:
        text = data.decode("utf-8", errors="replace")
        cut = f"\n[{stream} cut: showed the first {policy.output_bytes} of {total} bytes]\n"
        return text + cut if total > policy.output_bytes else text

    stdout = shown(outcome.stdout, outcome.stdout_total, "stdout")
    stderr = shown(outcome.stderr, outcome.stderr_total, "stderr")
    response = outcome.response
    if response is None or outcome.cancelled or outcome.timed_out or outcome.flooded or "ok" not in response:
        kind, message = failure(outcome, policy, tier, stderr)
        response = {"ok": False, "error": message, "error_kind": kind}
    return answer_result({**response, "stdout": stdout, "stderr": stderr, "output_truncated":
                          max(outcome.stdout_total, outcome.stderr_total) > policy.output_bytes,
                          "duration_ms": outcome.duration_ms, "exit_code": outcome.exit_code}, tier)


def failure(outcome: Outcome, policy: SandboxPolicy, tier: str, stderr: str) -> tuple[str, str]:
    """(error_kind, message) for a run that produced no result of its own; one that exited before its interpreter
    started gets what failed, its own words, and how to fix it."""
    if outcome.cancelled:
        return ERROR_CANCELLED, "cancelled: the run's process tree was killed"
    if outcome.timed_out:
        return ERROR_TIMEOUT, f"timed out after {policy.timeout_s:g} s: the run's process tree was killed"
    if outcome.flooded:
        return ERROR_LIMIT, "output flood: the run wrote far beyond the output cap and was killed"
    code, tail = outcome.exit_code, stderr[-STDERR_TAIL:].strip()
    if outcome.start_failed:
        status, said = f" (exit status {code})" if code is not None else "", tail or "(nothing on stderr)"
        if tier == TIER_BUBBLEWRAP:
            return ERROR_SANDBOX, f"the bubblewrap sandbox could not start{status}; bwrap said: {said}\n{BWRAP_FIX}"
        return ERROR_SANDBOX, (f"the sandboxed interpreter could not start{status}: {said}\nHow to fix: check that this "
                               "Python can start (`python -I -c pass`) and that the project folder is readable")
    if outcome.protocol_error:
        return ERROR_SANDBOX, outcome.protocol_error
    number = -code if code is not None and code < 0 else None
    if code is not None and code > 128 and tier == TIER_BUBBLEWRAP:  # its process 1 dies as 128 + the signal
        number = code - 128
    detail = f"\n{tail}" if tail else ""
    if number == signal.SIGXCPU:
        return ERROR_LIMIT, f"CPU time limit of {policy.cpu_s} s exceeded{detail}"
    if number == signal.SIGKILL:
        return ERROR_LIMIT, f"killed by SIGKILL (CPU hard limit or memory exhaustion){detail}"
    if number is not None:
        name = next((known.name for known in signal.Signals if known == number), f"signal {number}")
        return ERROR_SANDBOX, f"the sandboxed process died from {name} without a result{detail}"
    return ERROR_SANDBOX, f"the sandboxed process exited with status {code} without a result{detail}"


def answer_result(answer: dict[str, Any], tier: str) -> RunResult:
    """An answer (a run's, or one call's of a `call_each` run) as a RunResult; a field not of its type is dropped."""
    def typed(key: str, kind: type[Any] | tuple[type[Any], ...]) -> Any:
        value = answer.get(key)
        return value if isinstance(value, kind) and not isinstance(value, bool) else None

    files = answer.get("files_read")
    return RunResult(
        ok=answer.get("ok") is True, value=answer.get("value"), value_is_repr=answer.get("value_is_repr") is True,
        error=typed("error", str), error_kind=typed("error_kind", str),
        stdout=str(answer.get("stdout", "")), stderr=str(answer.get("stderr", "")),
        output_truncated=answer.get("output_truncated") is True,
        duration_ms=float(typed("duration_ms", (int, float)) or 0.0),
        files_read=tuple(f for f in files if isinstance(f, str)) if isinstance(files, list) else (), tier=tier,
        exit_code=typed("exit_code", int),
    )


WEAK_TIER_NETWORK = ("refused, nothing was run: a network grant needs the bubblewrap tier. The rlimits tier has no "
                     "network namespace, so a run given the network would reach services on this machine's loopback "
                     "(127.0.0.1, ::1) and its LAN directly, past the proxy that limits a grant to public host names. "
                     "Run it without the network, or make bubblewrap work here (`tuiagent sandbox status` says why "
                     "it does not)")

