"""Where recipe runs are recorded: one JSON line per run in the audit log (`.agent/runs/`) and run counts in `.agent/state.db`."""

from __future__ import annotations

import datetime as dt
import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.core.project import Project
from tui_agent.core.recipes.model import RecipeRun

MAX_AUDIT_TEXT = 4000

SCHEMA = """
CREATE TABLE IF NOT EXISTS recipe_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    recipe TEXT NOT NULL,
    trigger TEXT NOT NULL,
    started_at REAL NOT NULL,
    duration_ms REAL NOT NULL,
    ok INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS recipe_runs_by_recipe ON recipe_runs(recipe);
"""


@dataclass(frozen=True)
class RunStats:
    """How often a recipe ran, how often it failed, and when it last ran (ISO time)."""

    runs: int = 0
    failures: int = 0
    last_run: str | None = None


def _clip(value: Any) -> Any:
    text = value if isinstance(value, str) else json.dumps(value, default=repr)
    if len(text) <= MAX_AUDIT_TEXT:
        return value
    return text[:MAX_AUDIT_TEXT] + f"... [{len(text) - MAX_AUDIT_TEXT} more characters cut]"


class RunLog:
    """Appends recipe runs to `.agent/runs/<date>.jsonl` (flushed per line) and counts them in state.db."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:
            self.project.state_db.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(str(self.project.state_db), timeout=10.0, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA busy_timeout = 10000")
            db.execute("PRAGMA journal_mode = WAL")
            db.executescript(SCHEMA)
            self._db = db
        return self._db

    def audit_path(self, when: dt.datetime | None = None) -> Path:
        day = (when or dt.datetime.now()).strftime("%Y-%m-%d")
        return self.project.runs_dir / f"{day}.jsonl"

    def record(self, run: RecipeRun) -> None:
        now = dt.datetime.now()
        entry = {
            "time": now.isoformat(timespec="milliseconds"),
            "kind": "recipe",
            "label": f"recipe:{run.recipe}",
            "recipe": run.recipe,
            "trigger": run.trigger,
            "action": run.action,
            "ok": run.ok,
            "summary": _clip(run.summary),
            "duration_ms": round(run.duration_ms, 2),
            "detail": {key: _clip(value) for key, value in run.detail.items()},
        }
        path = self.audit_path(now)
        with self._lock:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(entry, default=repr) + "\n")
                handle.flush()
            db = self._connection()
            db.execute(
                "INSERT INTO recipe_runs (recipe, trigger, started_at, duration_ms, ok) VALUES (?, ?, ?, ?, ?)",
                (run.recipe, run.trigger, time.time() - run.duration_ms / 1000, run.duration_ms, int(run.ok)),
            )

    def stats(self) -> dict[str, RunStats]:
        with self._lock:
            rows = self._connection().execute(
                "SELECT recipe, COUNT(*), SUM(1 - ok), MAX(started_at) FROM recipe_runs GROUP BY recipe"
            ).fetchall()
        return {
            name: RunStats(runs, failures or 0, dt.datetime.fromtimestamp(last).isoformat(timespec="seconds") if last else None)
            for name, runs, failures, last in rows
        }

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
