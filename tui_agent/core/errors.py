"""TuiAgentError, the root every tuiagent exception derives from, and ErrorKind, the kinds callers branch on."""

from __future__ import annotations

from enum import StrEnum


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
