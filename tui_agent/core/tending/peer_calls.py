"""Calls other agents make through `tuiagent mcp serve`, recorded as a transcript the repeated-chain miner reads.

A served connection has no conversation of its own, so its calls are kept apart from the person's sessions (which
`--continue` and the session list show): `.agent/sessions/peers/<via>-<id>.jsonl`, in the same event records a turn
writes (ToolCallStarted, ToolCallFinished), so the miner sees them exactly as it sees the TUI's calls."""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any

from tui_agent.core.agent.sessions import SessionLog, new_session_id
from tui_agent.core.events import ToolCallFinished, ToolCallStarted
from tui_agent.core.project import Project
from tui_agent.core.content import JsonObject

PEERS = "peers"
MAX_RESULT_CHARS = 2000


def peer_transcripts(sessions_dir: Path) -> list[Path]:
    """The transcripts of calls from other agents (ordered as the miner orders sessions: by the caller)."""
    folder = sessions_dir / PEERS
    return list(folder.glob("*.jsonl")) if folder.is_dir() else []


class PeerCallLog:
    """One served connection's calls; the file is created with the first call (a connection that calls nothing
    leaves none). Writing never fails a call: an unwritable `.agent/` keeps the records in memory."""

    def __init__(self, project: Project, via: str) -> None:
        session_id = f"{via}-{new_session_id()}"
        self.via = via
        self.log = SessionLog(project.sessions_dir / PEERS / f"{session_id}.jsonl", session_id)
        self._header: dict[str, Any] | None = {"type": "session", "id": session_id, "via": via,
                                               "started": time.time(), "project": str(project.root)}
        self._ids = itertools.count(1)
        self.stopped = False

    def started(self, name: str, arguments: JsonObject) -> str:
        """Record that a call began; its id for `finished`."""
        call_id = f"{self.via}_{next(self._ids)}"
        if self._header is not None:
            header, self._header = self._header, None
            self.log.append(header)
        self._append(ToolCallStarted(call_id=call_id, name=name, arguments=dict(arguments)))
        return call_id

    def finished(self, call_id: str, name: str, result: str, *, is_error: bool, duration_ms: float) -> None:
        text = result if len(result) <= MAX_RESULT_CHARS else result[:MAX_RESULT_CHARS] + "…"
        self._append(ToolCallFinished(call_id=call_id, name=name, result=text, is_error=is_error,
                                      duration_ms=duration_ms, truncated=len(result) > MAX_RESULT_CHARS))

    def _append(self, event: ToolCallStarted | ToolCallFinished) -> None:
        """Append, unless the file has proved unwritable (a read-only project): then recording stops, so a long-lived
        server does not keep every call in memory waiting for a write that will not come."""
        if self.stopped:
            return
        self.log.append_event(event)
        if any(level == "warning" for _line, level in self.log.take_problems()):
            self.stopped = True
