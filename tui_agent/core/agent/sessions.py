"""Session transcripts: `.agent/sessions/<id>.jsonl`, appended and flushed line by line, listed and resumed."""

from __future__ import annotations

import contextlib
import json
import secrets
import time
from dataclasses import asdict, dataclass, is_dataclass
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from tui_agent.core import projectfs
from tui_agent.core.appendfile import append_whole
from tui_agent.core.agent.session_records import INTERRUPTED_RESULT as INTERRUPTED_RESULT, read_records as read_records
from tui_agent.core.agent.session_events import BadEventRecord, DecodedEvents, decode_event, decode_events, is_event_record
from tui_agent.core.agent.turns import Turn, merged_messages, message_of
from tui_agent.core.content import ApiMessage, JsonObject
from tui_agent.core.errors import TuiAgentError
from tui_agent.core.events import Event, TurnStarted, Usage
from tui_agent.core.project import Project


class SessionNotFound(TuiAgentError, LookupError):
    """No session with that id (or no session at all) in `.agent/sessions/`."""


@dataclass(frozen=True)
class SessionInfo:
    """A session on disk: id, when it was last written, its first prompt and its model."""

    id: str
    path: Path
    modified: float
    first_prompt: str
    model: str


def new_session_id() -> str:
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)


class SessionLog:
    """An append-only JSONL transcript; every record is written whole as soon as it is appended.

    When the file cannot be written (disk full, read-only `.agent/sessions/`), the conversation goes on: the records
    wait in memory and are written, in order, by the first append that succeeds; `take_problems()` says what happened."""

    def __init__(self, path: Path, session_id: str) -> None:
        self.path = path
        self.id = session_id
        self._pending_header: Mapping[str, object] | None = None
        self._unwritten: list[bytes] = []
        self._failing: str | None = None  # why the last write failed, while it keeps failing
        self._problems: list[tuple[str, Literal["info", "warning"]]] = []

    @classmethod
    def create(cls, project: Project, *, model: str) -> "SessionLog":
        session_id = new_session_id()
        log = cls(project.sessions_dir / f"{session_id}.jsonl", session_id)
        # Written with the first record, so that opening the app without saying anything leaves no empty session.
        log._pending_header = {"type": "session", "id": session_id, "model": model, "started": time.time(), "project": str(project.root)}
        return log

    @classmethod
    def reopen(cls, project: Project, session_id: str) -> "SessionLog":
        path = session_path(project, session_id)
        with contextlib.suppress(OSError):  # read-only: appends will say so
            _drop_truncated_tail(path)
        return cls(path, session_id)

    def append(self, record: Mapping[str, object]) -> None:
        if self._pending_header is not None:
            header, self._pending_header = self._pending_header, None
            self._unwritten.append(_line(header))
        self._unwritten.append(_line(record))
        self._write_unwritten()

    def _write_unwritten(self) -> None:
        try:
            projectfs.make_dirs(self.path.parent)
            while self._unwritten:
                append_whole(self.path, self._unwritten[0])
                self._unwritten.pop(0)
        except OSError as error:
            reason = error.strerror or str(error)
            if self._failing is None:
                self._problems.append((f"the session file {self.shown} cannot be written ({reason}); the conversation "
                                       "goes on and is kept in memory until it can be written (free some space or make "
                                       ".agent/sessions/ writable)", "warning"))
            self._failing = reason
            return
        if self._failing is not None:
            self._failing = None
            self._problems.append((f"the session file {self.shown} is written again; nothing was lost", "info"))

    @property
    def shown(self) -> str:
        return f".agent/sessions/{self.path.name}"

    def take_problems(self) -> list[tuple[str, Literal["info", "warning"]]]:
        """What went wrong (or right again) with the file since the last call: (one line, level) each."""
        problems, self._problems = self._problems, []
        return problems

    def append_message(self, message: ApiMessage) -> None:
        self.append({"type": "message", "message": message})

    def append_turn(self, turn: Turn) -> None:
        """A turn, as a message record that names its kind (an older reader still reads the message)."""
        self.append({"type": "message", "turn": turn.record_kind, "message": message_of(turn)})

    def append_event(self, event: Event) -> None:
        data = asdict(event) if is_dataclass(event) else {}
        self.append({"type": "event", "event": type(event).__name__, "data": data, "time": time.time()})

    def close(self) -> None:
        """Try once more to write what waits in memory (every record is otherwise written as it comes)."""
        if self._unwritten:
            self._write_unwritten()


def _line(record: Mapping[str, object]) -> bytes:
    """One JSON line; a lone surrogate (a file name's byte that is not UTF-8) is written as its JSON escape `\\udcff`
    (only strings can hold one), so the line stays UTF-8 and reads back the same."""
    return (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8", "backslashreplace")


def session_path(project: Project, session_id: str) -> Path:
    if not session_id or "/" in session_id or "\\" in session_id or session_id.startswith("."):
        raise SessionNotFound(f"invalid session id {session_id!r}")
    path = project.sessions_dir / f"{session_id}.jsonl"
    if not path.is_file():
        raise SessionNotFound(f"no session {session_id!r} in {project.relative(project.sessions_dir) if project.sessions_dir.exists() else '.agent/sessions'}")
    return path


def read_events(path: Path) -> DecodedEvents:
    """The session's events as the typed events the turn emitted; event records that do not decode are named in `problems`."""
    return decode_events(read_records(path))


def _drop_truncated_tail(path: Path) -> None:
    """Cut a last line that was only half written, so that appends start on a fresh line."""
    data = projectfs.read_bytes(path)
    if data and not data.endswith(b"\n"):
        projectfs.write_atomic(path, data[: data.rfind(b"\n") + 1])


def load_messages(path: Path) -> list[ApiMessage]:
    """The API message list of a session since its last `clear`, repaired so it can be sent again (its typed turns:
    `session_turns.load_turns`)."""
    from tui_agent.core.agent.session_turns import load_turns

    return merged_messages(load_turns(path))


def _event_or_none(record: JsonObject) -> Event | None:
    try:
        return decode_event(record)
    except BadEventRecord:
        return None


def load_usage(path: Path) -> dict[str, float]:
    """The session's usage totals from its Usage events (so a resumed session keeps counting)."""
    totals = {"input_tokens": 0.0, "output_tokens": 0.0, "cache_read_tokens": 0.0, "cache_write_tokens": 0.0, "cost_usd": 0.0}
    for event in read_events(path).events:
        if isinstance(event, Usage):
            for key in totals:
                totals[key] += float(getattr(event, key))
    return totals


def list_sessions(project: Project) -> list[SessionInfo]:
    """Sessions on disk, newest first."""
    if not project.sessions_dir.is_dir():
        return []
    infos: list[SessionInfo] = []
    for path in project.sessions_dir.glob("*.jsonl"):
        first_prompt, model = "", ""
        for record in read_records(path):
            if record.get("type") == "session":
                model = str(record.get("model", ""))
            if is_event_record(record) and record.get("event") == "TurnStarted":
                event = _event_or_none(record)
                if isinstance(event, TurnStarted):
                    first_prompt = event.prompt
                    break
        infos.append(SessionInfo(path.stem, path, path.stat().st_mtime, first_prompt, model))
    return sorted(infos, key=lambda info: (info.modified, info.id), reverse=True)


def latest_session_id(project: Project) -> str:
    sessions = list_sessions(project)
    if not sessions:
        raise SessionNotFound("no session to continue in .agent/sessions/")
    return sessions[0].id
