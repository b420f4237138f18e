"""Sandbox value types: what `Sandbox.run` runs (a shell command, a tool call, a code snippet or script, a batch of
tool calls), the limits it runs under, the result of one run, tier levels and the unavailable error."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Union

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


@dataclass(frozen=True)
class SandboxPolicy:
    """Limits for one run. Sizes in MiB, times in seconds; `network` False cuts every socket, True reaches any
    public host name through the host's proxy, a tuple of names only those (network/policy.py).

    `project_writable` False makes the whole project read-only for the run (bubblewrap tier; a private /tmp
    stays writable): the catalog runs a tool's import and its own tests that way. The rlimits tier cannot
    enforce it and says so in `describe()`.
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
        return {
            "timeout_s": self.timeout_s,
            "cpu_s": self.cpu_s,
            "memory_mb": self.memory_mb,
            "file_size_mb": self.file_size_mb,
            "open_files": self.open_files,
            "processes": self.processes,
            "output_bytes": self.output_bytes,
            "network": list(self.network) if isinstance(self.network, tuple) else self.network,
            "project_writable": self.project_writable,
            "venv_writable": self.venv_writable,
        }


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
        return {
            "ok": self.ok,
            "value": self.value,
            "value_is_repr": self.value_is_repr,
            "error": self.error,
            "error_kind": self.error_kind,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "output_truncated": self.output_truncated,
            "duration_ms": self.duration_ms,
            "files_read": list(self.files_read),
            "tier": self.tier,
            "exit_code": self.exit_code,
        }


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


@dataclass(frozen=True)
class Snippet:
    """Python code; a final expression is the value. `tool_paths` (name → file) makes `import name` load exactly
    that file and nothing else from `.agent/tools/`; `script_path` runs the code as that file's `__main__`."""

    code: str
    tool_paths: Mapping[str, str] | None = None
    script_path: str | None = None


@dataclass(frozen=True)
class ToolBatch:
    """Tool calls in ONE run, each in its own forked child with the run's limits (`timeout_s` is per call), in
    order: one result per call. Calls of one module's function imported by name share its import."""

    calls: tuple[ToolCall, ...] = field(default_factory=tuple)


Program = Union[ShellCommand, ToolCall, Snippet, ToolBatch]
