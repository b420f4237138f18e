"""How the UI words a failure: the core's own message for its errors, the exception's text for the rest."""

from __future__ import annotations

from tui_agent.core.catalog.errors import PipelineError


def error_message(exc: Exception) -> str:
    """A PipelineError's message without its `[stage]` prefix (callers show the stage where it helps), else str(exc)."""
    return exc.message if isinstance(exc, PipelineError) else str(exc)
