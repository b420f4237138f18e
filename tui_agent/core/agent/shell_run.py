"""run_shell's result as the model reads it (exit status, pipeline failure, output, network refusals) and the
host-side decoder that turns the command's live output into ToolOutputDelta events."""

from __future__ import annotations

import codecs
from collections.abc import Callable

from tui_agent.core.events import Event, ToolOutputDelta

SIGPIPE_STATUS = 141
"""A command stopped because what read its output had finished (`yes | head -1`): not a failure."""


def pipeline_failure(report: dict[str, object]) -> str | None:
    """Why a command that exited 0 still failed: a command before the last of its final pipeline failed (`python3 -m
    pytest | tail` exits 0 when pytest is missing); None when nothing did."""
    statuses = report.get("pipeline")
    if report.get("exit_code") != 0 or not isinstance(statuses, list) or len(statuses) < 2:
        return None
    failed = [status for status in statuses[:-1] if isinstance(status, int) and status not in (0, SIGPIPE_STATUS)]
    if not failed:
        return None
    return f"a command of the pipeline failed (its exit statuses: {' '.join(str(s) for s in statuses)})"


def report_text(report: dict[str, object]) -> tuple[str, bool]:
    """A shell command's report as the model reads it: its exit status (or signal, or timeout), any pipeline failure,
    its output (the sandbox kept its head and tail), and on a line of its own what the network proxy refused; and
    whether it failed."""
    exit_code, killed_by = report.get("exit_code"), report.get("signal")
    if report.get("timed_out"):
        status = "exit code: timeout"
    elif killed_by is not None:
        status = f"exit code: none, killed by {killed_by}"
    else:
        status = f"exit code: {exit_code}"
    failure = pipeline_failure(report)
    if failure is not None:
        status += f", but {failure}"
    lines = [status]
    for stream in ("stdout", "stderr"):
        text = str(report.get(stream) or "")
        if text:
            lines.append(f"[{stream}]\n{text}")
    refused = report.get("network_refused")
    if isinstance(refused, list) and refused:  # what the proxy said no to, and why (a client shows only "403 Forbidden")
        lines.append("[network]\n" + "\n".join(f"refused: {line}" for line in refused))
    return "\n".join(lines), exit_code != 0 or failure is not None


def live_listener(call_id: str, show: Callable[[Event], None]) -> Callable[[bytes], None]:
    """A sandbox output listener that hands each decoded chunk to `show` as a ToolOutputDelta of `call_id`."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def listen(chunk: bytes) -> None:
        text = decoder.decode(chunk)
        if text:
            show(ToolOutputDelta(call_id, text))

    return listen
