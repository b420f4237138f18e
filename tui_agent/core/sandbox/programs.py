"""What `Sandbox.run` runs: a shell command, a tool call, a code snippet (or a script file), or a batch of tool calls."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Union


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
