"""PipelineError: the structured error (stage, message, line) every catalog failure is reported as."""

from __future__ import annotations

import errno
from typing import Any

from tui_agent.core.errors import TuiAgentError

STAGES = ("name", "read", "parse", "inspect", "schema", "tests", "write", "commit", "missing", "run", "unsaved", "conflict")


class PipelineError(TuiAgentError):
    """A tool failed a pipeline stage; nothing on disk or in git changed."""

    def __init__(self, stage: str, message: str, line: int | None = None, *, details: dict[str, Any] | None = None) -> None:
        super().__init__(f"[{stage}] {message}" + (f" (line {line})" if line else ""))
        self.stage = stage
        self.message = message
        self.line = line
        self.details = dict(details or {})

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {"stage": self.stage, "message": self.message, "line": self.line}
        if self.details:
            data["details"] = self.details
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "PipelineError":
        return cls(str(data.get("stage", "inspect")), str(data.get("message", "")), data.get("line"), details=data.get("details"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PipelineError) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((self.stage, self.message, self.line))


def os_failure_hint(error: OSError) -> str:
    """What an OSError means for a person changing the catalog, and what to do (no errno, no temp-file name)."""
    reason = error.strerror or str(error)
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"{reason}; the disk is full: free some space and try again"
    if error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"{reason}; the project or its .agent/ folder is not writable: make it writable to change it"
    return f"{reason}; check the folder and try again"


def failure_reason(error: Exception) -> str:
    """An exception as the end of a one-line message: an OSError in words (see os_failure_hint), else its text."""
    return os_failure_hint(error) if isinstance(error, OSError) else str(error)


def write_failed(rel: str, error: OSError) -> PipelineError:
    """A file of `.agent/` could not be written, and nothing was changed."""
    return PipelineError("write", f"cannot write {rel}: {os_failure_hint(error)} (nothing was changed)")
