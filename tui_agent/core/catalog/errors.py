"""The catalog pipeline's stages, and its one-line failure texts; PipelineError itself lives in core/errors.py (versioning raises it too)."""

from __future__ import annotations

import errno

from tui_agent.core.errors import PipelineError as PipelineError

STAGES = ("name", "read", "parse", "inspect", "schema", "tests", "write", "commit", "missing", "run", "unsaved", "conflict")


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
