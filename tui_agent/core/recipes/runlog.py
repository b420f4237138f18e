"""Where recipe runs are recorded: the sandbox audit log (`.agent/runs/`, one JSON line per run) and run counts in `.agent/state.db`."""

from __future__ import annotations

import datetime as dt
import sqlite3
import threading
import time
from dataclasses import dataclass
from typing import Any

from tui_agent.core.catalog.statefile import open_state_db
from tui_agent.core.project import Project
from tui_agent.core.recipes.model import RecipeRun
from tui_agent.core.auditlog import AuditLog
from tui_agent.core.sandbox import RunResult

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


class RunLog:
    """Writes each recipe run to the sandbox's audit log (`.agent/runs/<date>.jsonl`, kind "recipe") and counts it in state.db."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.audit = AuditLog(project.runs_dir)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._notices: list[str] = []

    @property
    def notices(self) -> list[str]:
        """Why runs are not recorded (a read-only or full disk), one line each; the runs themselves went ahead."""
        return [*self._notices, *self.audit.notices]

    def _connection(self) -> sqlite3.Connection:
        if self._db is None:  # a read-only or full disk gives an in-memory copy (and a notice), never an error
            self._db = open_state_db(self.project.state_db, SCHEMA, self._notices)
        return self._db

    def _count(self, run: RecipeRun) -> None:
        try:
            with self._lock:
                self._connection().execute(
                    "INSERT INTO recipe_runs (recipe, trigger, started_at, duration_ms, ok) VALUES (?, ?, ?, ?, ?)",
                    (run.recipe, run.trigger, time.time() - run.duration_ms / 1000, run.duration_ms, int(run.ok)),
                )
        except sqlite3.OperationalError as error:  # the disk filled up since: this run is not counted
            notice = f"state.db: {error}; recipe run counts are not saved (nothing was half-written)"
            if notice not in self._notices:
                self._notices.append(notice)

    def record(self, run: RecipeRun, *, version: str | None = None) -> dict[str, Any]:
        """Append the run to the audit log and the counters; returns the audit entry."""
        detail = dict(run.detail)
        result = RunResult(
            ok=run.ok, value=run.summary if run.ok else None, value_is_repr=False,
            error=None if run.ok else run.summary, error_kind=None if run.ok else "recipe",
            stdout=str(detail.pop("stdout", "") or ""), stderr=str(detail.pop("stderr", "") or ""),
            output_truncated=False, duration_ms=run.duration_ms, files_read=(),
            tier=str(detail.pop("tier", "") or "none"), exit_code=None,
        )
        args = {"trigger": run.trigger, "action": run.action, **detail}
        entry = self.audit.record(label=f"recipe {run.recipe}", version=version, kind="recipe", result=result, args=args,
                                  module=None, code=None)
        self._count(run)
        return entry

    def entries(self, recipe: str | None = None) -> list[dict[str, Any]]:
        """Recipe lines of the audit log (all recipes, or one), oldest first."""
        return [entry for entry in self.audit.entries()
                if entry.get("kind") == "recipe" and (recipe is None or entry.get("label") == f"recipe {recipe}")]

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
