"""Frozen records of the catalog: ToolSpec (a validated version), ToolRecord (a tool's live state), DriftReport."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.hostnames import Grant, grant_of
from tui_agent.core.content import JsonSchema, ToolDefinition


@dataclass(frozen=True)
class ToolTest:
    """One of a tool's own `test_*` functions and how its last run went."""

    name: str
    ok: bool
    error: str | None = None
    line: int | None = None
    duration_ms: float = 0.0


@dataclass(frozen=True)
class ToolSpec:
    """A validated tool version: what the model sees (name, description, input_schema) plus its metadata."""

    name: str
    description: str
    input_schema: JsonSchema
    source_sha: str
    depends_on: tuple[str, ...] = ()
    network: Grant = False
    """NETWORK: True (any public host name), a tuple of host names, or False."""
    writes: bool = False  # WRITES = True: may run with the project writable, when the caller allows it
    tests: tuple[ToolTest, ...] = ()

    def to_api(self) -> ToolDefinition:
        """The tool definition as the Messages API takes it."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["depends_on"] = list(self.depends_on)
        data["tests"] = [asdict(t) for t in self.tests]
        return data

    @classmethod
    def from_inspection(cls, result: dict[str, Any], source_sha: str) -> "ToolSpec":
        schema = result["schema"]
        return cls(
            name=schema["name"],
            description=schema["description"],
            input_schema=schema["input_schema"],
            source_sha=source_sha,
            depends_on=tuple(result.get("depends_on", ())),
            network=grant_of(result.get("network", False)),
            writes=bool(result.get("writes", False)),
            tests=tuple(ToolTest(t["name"], bool(t["ok"]), t.get("error"), t.get("line"), float(t.get("duration_ms", 0.0)))
                        for t in result.get("tests", ())),
        )


@dataclass(frozen=True)
class ToolRecord:
    """A tool as the catalog sees it now: status, last good spec, current error, commit and usage."""

    name: str
    status: str  # "ok" | "broken" | "drifted" | "unused"
    spec: ToolSpec | None
    error: PipelineError | None = None
    commit: str | None = None
    calls: int = 0
    failures: int = 0
    last_used: float | None = None
    mean_ms: float | None = None
    path: str = ""

    @property
    def description(self) -> str:
        return self.spec.description if self.spec else ""

    @property
    def status_label(self) -> str:
        """The status for people: `broken: unresolved conflict` for a file holding git's conflict markers."""
        return broken_label(self.error) if self.status == "broken" else self.status

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "status": self.status,
            "description": self.description,
            "calls": self.calls,
            "failures": self.failures,
            "last_used": self.last_used,
            "mean_ms": self.mean_ms,
            "commit": self.commit,
            "path": self.path,
            "error": self.error.to_dict() if self.error else None,
            "spec": self.spec.to_dict() if self.spec else None,
        }


@dataclass(frozen=True)
class DriftReport:
    """Which dependency files of a tool changed since its version was written, their diff, and a fresh test run."""

    name: str
    since_commit: str | None
    changed_files: tuple[str, ...]
    diff: str
    tests_pass: bool | None = None
    test_error: dict[str, Any] | None = None
    watched_files: tuple[str, ...] = ()
    note: str = ""
    tests: tuple[ToolTest, ...] = field(default=())
    added_files: tuple[str, ...] = ()
    """Dependency files that appeared since the reference: drift only when the tests then fail."""
    broken: str = ""
    """`broken: unresolved conflict: …` and the like when the file on disk is broken (the report is the last good
    version's)."""
    reviewed_at: str | None = None
    """The commit of the accepted review the files were compared with (`tools drift NAME --accept`), if any."""

    @property
    def drifted(self) -> bool:
        return bool(self.changed_files) or (bool(self.added_files) and self.tests_pass is False)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["drifted"] = self.drifted
        data["changed_files"] = list(self.changed_files)
        data["watched_files"] = list(self.watched_files)
        data["added_files"] = list(self.added_files)
        data["tests"] = [asdict(t) for t in self.tests]
        return data


def broken_label(error: PipelineError | None) -> str:
    """`broken`, or `broken: unresolved conflict` when the file holds git's conflict markers."""
    return "broken: unresolved conflict" if error is not None and error.stage == "conflict" else "broken"
