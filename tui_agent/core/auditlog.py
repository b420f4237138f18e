"""The audit log of agent code runs (sandboxed runs, recipe runs, MCP tool calls): one JSON line per run in `.agent/runs/<YYYY-MM-DD>.jsonl`."""

from __future__ import annotations

import json
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from tui_agent.core import projectfs
from tui_agent.core.appendfile import append_whole

if TYPE_CHECKING:
    from tui_agent.core.sandbox import RunResult

FIELD_LIMIT = 4000


def _cut(text: str, limit: int = FIELD_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f"... [{len(text) - limit} more characters]"


def _compact(value: Any) -> Any:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        return _cut(repr(value))
    return value if len(text) <= FIELD_LIMIT else _cut(text)


def entry_for(moment: datetime, *, label: str, version: str | None, kind: str, result: RunResult,
              args: Any = None, code: str | None = None, module: str | None = None) -> dict[str, Any]:
    """The audit line of one run, as a dict."""
    return {
        "time": moment.isoformat(timespec="milliseconds"),
        "kind": kind,
        "label": label,
        "version": version,
        "module": module,
        "args": _compact(args),
        "code": _cut(code) if code is not None else None,
        "ok": result.ok,
        "value": _compact(result.value) if result.ok else None,
        "error": _cut(result.error) if result.error else None,
        "error_kind": result.error_kind,
        "stdout": _cut(result.stdout, 1000),
        "stderr": _cut(result.stderr, 1000),
        "output_truncated": result.output_truncated,
        "files_read": list(result.files_read),
        "duration_ms": round(result.duration_ms, 2),
        "tier": result.tier,
        "exit_code": result.exit_code,
    }


class AuditLog:
    """Appends and flushes one line per run; safe to call from several tasks and threads."""

    def __init__(self, runs_dir: Path, on_notice: Callable[[str], None] | None = None) -> None:
        self.runs_dir = runs_dir
        self.notices: list[str] = []
        self.on_notice = on_notice  # told each new notice as it comes (the sandbox shows it with the run)
        self._lock = threading.Lock()

    def record(self, *, label: str, version: str | None, kind: str, result: RunResult,
               args: Any = None, code: str | None = None, module: str | None = None) -> dict[str, Any]:
        return self.record_many([dict(label=label, version=version, kind=kind, result=result, args=args, code=code,
                                      module=module)])[0]

    def record_many(self, runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """One line per run (each given as `record`'s keyword arguments), appended in one write."""
        moment = datetime.now(timezone.utc)
        entries = [entry_for(moment, **run) for run in runs]
        data = "".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in entries).encode("utf-8")
        with self._lock:
            try:
                projectfs.make_dirs(self.runs_dir)
                append_whole(self.runs_dir / f"{moment:%Y-%m-%d}.jsonl", data)
            except OSError as error:  # read-only or full disk, or a link refused: the run itself still counts
                notice = f"the audit log .agent/runs/ cannot be written ({error.strerror or error}); runs are not logged"
                if notice not in self.notices:
                    self.notices.append(notice)
                    if self.on_notice is not None:
                        self.on_notice(notice)
        return entries

    def entries(self) -> list[dict[str, Any]]:
        """Every recorded line, oldest file first (for tests and `sandbox` CLI output)."""
        return [json.loads(raw) for file in sorted(self.runs_dir.glob("*.jsonl"))
                for raw in projectfs.read_text(file).splitlines() if raw.strip()]
