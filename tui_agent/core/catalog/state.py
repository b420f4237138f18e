"""The catalog's local state in `.agent/state.db` (sqlite, WAL): usage, files read, validation cache, tool versions."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

SCHEMA = """
CREATE TABLE IF NOT EXISTS tool_runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    tool TEXT NOT NULL,
    started_at REAL NOT NULL,
    duration_ms REAL NOT NULL,
    ok INTEGER NOT NULL,
    source_sha TEXT
);
CREATE INDEX IF NOT EXISTS tool_runs_by_tool ON tool_runs(tool);
CREATE TABLE IF NOT EXISTS file_reads (
    tool TEXT NOT NULL,
    path TEXT NOT NULL,
    first_seen REAL NOT NULL,
    last_seen REAL NOT NULL,
    PRIMARY KEY (tool, path)
);
CREATE TABLE IF NOT EXISTS validation_cache (
    source_sha TEXT NOT NULL,
    inspector_version INTEGER NOT NULL,
    result TEXT NOT NULL,
    created_at REAL NOT NULL,
    PRIMARY KEY (source_sha, inspector_version)
);
CREATE TABLE IF NOT EXISTS tool_versions (
    tool TEXT NOT NULL,
    source_sha TEXT NOT NULL,
    base_commit TEXT,
    written_at REAL NOT NULL,
    PRIMARY KEY (tool, source_sha)
);
CREATE TABLE IF NOT EXISTS suggestions (
    chain_id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    steps TEXT NOT NULL,
    changed_at REAL NOT NULL,
    tool TEXT
);
"""


@dataclass(frozen=True)
class UsageStats:
    """Aggregated calls of one tool."""

    calls: int = 0
    failures: int = 0
    last_used: float | None = None
    mean_ms: float | None = None


class StateStore:
    """Thread-safe access to `.agent/state.db`; safe to share with another process (WAL, busy timeout)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), timeout=10.0, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA busy_timeout = 10000")
        self._db.execute("PRAGMA journal_mode = WAL")
        self._db.execute("PRAGMA synchronous = NORMAL")
        with self._lock:
            self._db.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _write(self, sql: str, params: Iterable[Any] = ()) -> None:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute(sql, tuple(params))
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def _read(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        with self._lock:
            return self._db.execute(sql, tuple(params)).fetchall()

    # usage -----------------------------------------------------------------
    def record_run(self, tool: str, *, ok: bool, duration_ms: float, files_read: Iterable[str] = (),
                   source_sha: str | None = None, at: float | None = None) -> None:
        now = time.time() if at is None else at
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.execute("INSERT INTO tool_runs(tool, started_at, duration_ms, ok, source_sha) VALUES (?,?,?,?,?)",
                                 (tool, now, duration_ms, int(ok), source_sha))
                self._db.executemany(
                    "INSERT INTO file_reads(tool, path, first_seen, last_seen) VALUES (?,?,?,?) "
                    "ON CONFLICT(tool, path) DO UPDATE SET last_seen = excluded.last_seen",
                    [(tool, path, now, now) for path in set(files_read)],
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def usage(self) -> dict[str, UsageStats]:
        rows = self._read("SELECT tool, COUNT(*), SUM(1 - ok), MAX(started_at), AVG(duration_ms) FROM tool_runs GROUP BY tool")
        return {tool: UsageStats(calls, failures or 0, last, mean) for tool, calls, failures, last, mean in rows}

    def files_read(self, tool: str) -> list[str]:
        return [row[0] for row in self._read("SELECT path FROM file_reads WHERE tool = ? ORDER BY path", (tool,))]

    # validation cache --------------------------------------------------------
    def cached_validation(self, source_sha: str, inspector_version: int) -> dict[str, Any] | None:
        rows = self._read("SELECT result FROM validation_cache WHERE source_sha = ? AND inspector_version = ?",
                          (source_sha, inspector_version))
        return json.loads(rows[0][0]) if rows else None

    def all_cached_validations(self, inspector_version: int) -> dict[str, dict[str, Any]]:
        rows = self._read("SELECT source_sha, result FROM validation_cache WHERE inspector_version = ?", (inspector_version,))
        return {sha: json.loads(result) for sha, result in rows}

    def cache_validation(self, source_sha: str, inspector_version: int, result: dict[str, Any]) -> None:
        self._write("INSERT OR REPLACE INTO validation_cache(source_sha, inspector_version, result, created_at) VALUES (?,?,?,?)",
                    (source_sha, inspector_version, json.dumps(result), time.time()))

    # tool versions -----------------------------------------------------------
    def record_version(self, tool: str, source_sha: str, base_commit: str | None) -> None:
        """Remember the commit a tool version was written against (kept from its first sighting)."""
        self._write("INSERT OR IGNORE INTO tool_versions(tool, source_sha, base_commit, written_at) VALUES (?,?,?,?)",
                    (tool, source_sha, base_commit, time.time()))

    def set_version_commit(self, tool: str, source_sha: str, commit: str) -> None:
        self._write("UPDATE tool_versions SET base_commit = ? WHERE tool = ? AND source_sha = ?", (commit, tool, source_sha))

    def version_commit(self, tool: str, source_sha: str) -> str | None:
        rows = self._read("SELECT base_commit FROM tool_versions WHERE tool = ? AND source_sha = ?", (tool, source_sha))
        return rows[0][0] if rows else None

    def all_version_commits(self) -> dict[tuple[str, str], str | None]:
        return {(tool, sha): commit for tool, sha, commit in self._read("SELECT tool, source_sha, base_commit FROM tool_versions")}

    # suggested tools ---------------------------------------------------------
    def set_suggestion(self, chain_id: str, status: str, steps: str, tool: str | None = None) -> None:
        """Remember what became of a suggested chain: `offered`, `dismissed` or `covered` (by `tool`)."""
        self._write("INSERT OR REPLACE INTO suggestions(chain_id, status, steps, changed_at, tool) VALUES (?,?,?,?,?)",
                    (chain_id, status, steps, time.time(), tool))

    def suggestions(self) -> dict[str, tuple[str, float, str | None]]:
        """chain id -> (status, when it was set, covering tool)."""
        rows = self._read("SELECT chain_id, status, changed_at, tool FROM suggestions")
        return {chain_id: (status, changed_at, tool) for chain_id, status, changed_at, tool in rows}
