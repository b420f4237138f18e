"""TuiAgentError, the root every tuiagent exception derives from; ErrorKind, the kinds callers branch on; PipelineError."""

from __future__ import annotations

import sqlite3
from enum import StrEnum
from typing import Any


class ErrorKind(StrEnum):
    """Why a model request failed for good (ModelError.kind): the loop shortens, retries or stops by kind. A str,
    so a session file or a JSON report holds the same words as before."""

    AUTH = "auth"
    CONNECTION = "connection"
    CONTEXT_TOO_LONG = "context_too_long"
    RATE_LIMIT = "rate_limit"
    OVERLOADED = "overloaded"
    INTERRUPTED = "interrupted"
    BAD_REQUEST = "bad_request"
    API_ERROR = "api_error"


class TuiAgentError(Exception):
    """A failure of tuiagent's own: `except TuiAgentError` catches every project exception and nothing else."""


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


PROJECT_FAILURES: tuple[type[Exception], ...] = (TuiAgentError, OSError, ValueError)
"""What an operation on the project's files, git history or catalog can raise: our own errors, the filesystem's, and a
bad value's (an unknown revision, undecodable bytes); a caller that says what failed and goes on catches these."""

PROJECT_STATE_FAILURES: tuple[type[Exception], ...] = (*PROJECT_FAILURES, sqlite3.Error)
"""PROJECT_FAILURES, and state.db's (a locked or damaged database), for a reader of the catalog's usage counts."""
