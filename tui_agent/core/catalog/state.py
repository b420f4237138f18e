"""The catalog's local state in `.agent/state.db` (sqlite, WAL): usage, files read, validation cache, tool versions."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from tui_agent.core.catalog.statefile import is_corrupt, open_state_db

from tui_agent.core.catalog import untrusted

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
CREATE TABLE IF NOT EXISTS drift_tests (
    tool TEXT PRIMARY KEY,
    fingerprint TEXT NOT NULL,
    tests_pass INTEGER NOT NULL,
    checked_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS suggestions (
    chain_id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    steps TEXT NOT NULL,
    changed_at REAL NOT NULL,
    tool TEXT
);
CREATE TABLE IF NOT EXISTS drift_baselines (
    tool TEXT NOT NULL,
    source_sha TEXT NOT NULL,
    files TEXT NOT NULL,
    PRIMARY KEY (tool, source_sha)
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
    """Thread-safe access to `.agent/state.db`; safe to share with another process (WAL, busy timeout).

    The file is a cache: a corrupt one is moved aside and rebuilt, a read-only one is read into memory, and a
    write that fails (disk full) is dropped whole. Each such event adds one line to `notices`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.notices: list[str] = []
        self._lock = threading.Lock()
        self._db = open_state_db(path, SCHEMA, self.notices)
        self._deferred: list[Callable[[sqlite3.Connection], Any]] | None = None
        """Writes waiting for one shared transaction (inside `deferred()`), or None when writes commit at once."""
        self._defer_depth = 0

    def close(self) -> None:
        with self._lock:
            self._flush_locked()
            self._db.close()

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """Writes made inside are kept in memory and saved together in ONE transaction: at the end, at `flush()`, or
        before any read (reads see them). A crash before then loses them all, never half of them (state.db is a cache)."""
        with self._lock:
            self._defer_depth += 1
            if self._deferred is None:
                self._deferred = []
        try:
            yield
        finally:
            with self._lock:
                self._defer_depth -= 1
                if self._defer_depth == 0:
                    try:
                        self._flush_locked()
                    finally:
                        self._deferred = None

    @property
    def deferring(self) -> bool:
        """Whether writes now wait in memory for one shared transaction (inside `deferred()`)."""
        return self._deferred is not None

    @property
    def pending_writes(self) -> int:
        """How many writes wait for the shared transaction."""
        return len(self._deferred or ())

    def flush(self) -> None:
        """Save the deferred writes now, in one transaction."""
        with self._lock:
            self._flush_locked()

    def _flush_locked(self) -> None:
        if self._deferred:
            works = list(self._deferred)
            self._deferred.clear()
            self._commit_locked(works)

    def _write(self, sql: str, params: Iterable[Any] = ()) -> None:
        values = tuple(params)
        self._transaction(lambda db: db.execute(sql, values))

    def _transaction(self, work: Callable[[sqlite3.Connection], Any]) -> None:
        """Run `work` in one transaction (or queue it for the deferred one); when the database cannot be written,
        nothing of that transaction is kept and a notice says why."""
        with self._lock:
            if self._deferred is not None:
                self._deferred.append(work)
                return
            self._commit_locked([work])

    def _commit_locked(self, works: list[Callable[[sqlite3.Connection], Any]]) -> None:
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except sqlite3.OperationalError as error:
            self._not_saved(error)
            return
        try:
            for work in works:
                work(self._db)
            self._db.execute("COMMIT")
        except sqlite3.OperationalError as error:  # disk full, read-only: the whole transaction is dropped
            self._rollback()
            self._not_saved(error)
        except BaseException:
            self._rollback()
            raise

    def _rollback(self) -> None:
        if self._db.in_transaction:
            self._db.execute("ROLLBACK")

    def _not_saved(self, error: sqlite3.Error) -> None:
        notice = f"{self.path.name}: {error}; usage counts and validation results are not saved (nothing was half-written)"
        if notice not in self.notices:
            self.notices.append(notice)

    def _read(self, sql: str, params: Iterable[Any] = ()) -> list[tuple[Any, ...]]:
        """Rows of a query; a database damaged since it was opened reads as empty (and says so in `notices`)."""
        with self._lock:
            self._flush_locked()
            try:
                return self._db.execute(sql, tuple(params)).fetchall()
            except sqlite3.DatabaseError as error:
                notice = f"{self.path.name} cannot be read ({error}); delete .agent/state.db (a cache) to rebuild it"
                if not is_corrupt(error):
                    raise
                if notice not in self.notices:
                    self.notices.append(notice)
                return []

    # usage -----------------------------------------------------------------
    def record_run(self, tool: str, *, ok: bool, duration_ms: float, files_read: Iterable[str] = (),
                   source_sha: str | None = None, at: float | None = None) -> None:
        now = time.time() if at is None else at

        def insert(db: sqlite3.Connection) -> None:
            db.execute("INSERT INTO tool_runs(tool, started_at, duration_ms, ok, source_sha) VALUES (?,?,?,?,?)",
                       (tool, now, duration_ms, int(ok), source_sha))
            db.executemany("INSERT INTO file_reads(tool, path, first_seen, last_seen) VALUES (?,?,?,?) "
                           "ON CONFLICT(tool, path) DO UPDATE SET last_seen = excluded.last_seen",
                           [(tool, path, now, now) for path in set(files_read)])

        self._transaction(insert)

    def usage(self) -> dict[str, UsageStats]:
        rows = self._read("SELECT tool, COUNT(*), SUM(1 - ok), MAX(started_at), AVG(duration_ms) FROM tool_runs GROUP BY tool")
        return {tool: UsageStats(calls, failures or 0, last, mean) for tool, calls, failures, last, mean in rows}

    def files_read(self, tool: str) -> list[str]:
        rows = self._read("SELECT path FROM file_reads WHERE tool = ? ORDER BY path", (tool,))
        return [row[0] for row in rows if untrusted.project_path(row[0])]

    # validation cache --------------------------------------------------------
    def cached_validation(self, source_sha: str, inspector_version: int) -> dict[str, Any] | None:
        rows = self._read("SELECT result FROM validation_cache WHERE source_sha = ? AND inspector_version = ?",
                          (source_sha, inspector_version))
        return untrusted.validation(rows[0][0]) if rows else None

    def all_cached_validations(self, inspector_version: int) -> dict[str, dict[str, Any]]:
        rows = self._read("SELECT source_sha, result FROM validation_cache WHERE inspector_version = ?", (inspector_version,))
        checked = {sha: untrusted.validation(result) for sha, result in rows}
        return {sha: result for sha, result in checked.items() if result is not None}

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
        return untrusted.commit_id(rows[0][0]) if rows else None

    def versions_newest_first(self, tool: str) -> list[str]:
        """The source hashes of every version of `tool` seen, newest first."""
        rows = self._read("SELECT source_sha FROM tool_versions WHERE tool = ? ORDER BY written_at DESC", (tool,))
        return [row[0] for row in rows]

    def all_version_commits(self) -> dict[tuple[str, str], str | None]:
        rows = self._read("SELECT tool, source_sha, base_commit FROM tool_versions")
        return {(tool, sha): untrusted.commit_id(commit) for tool, sha, commit in rows}

    # suggested tools ---------------------------------------------------------
    def set_suggestion(self, chain_id: str, status: str, steps: str, tool: str | None = None) -> None:
        """Remember what became of a suggested chain: `offered`, `dismissed` or `covered` (by `tool`)."""
        self._write("INSERT OR REPLACE INTO suggestions(chain_id, status, steps, changed_at, tool) VALUES (?,?,?,?,?)",
                    (chain_id, status, steps, time.time(), tool))

    def suggestions(self) -> dict[str, tuple[str, float, str | None]]:
        """chain id -> (status, when it was set, covering tool); rows of another shape (agent-planted) are skipped."""
        rows = self._read("SELECT chain_id, status, changed_at, tool FROM suggestions")
        return {str(chain_id): (str(status), float(changed_at), tool if isinstance(tool, str) else None)
                for chain_id, status, changed_at, tool in rows if isinstance(changed_at, int | float)}

    # drifted tools' test runs --------------------------------------------------
    def set_drift_test(self, tool: str, fingerprint: str, tests_pass: bool) -> None:
        """The outcome of a drifted tool's own tests against its dependency files as `fingerprint` names them."""
        self._write("INSERT OR REPLACE INTO drift_tests(tool, fingerprint, tests_pass, checked_at) VALUES (?,?,?,?)",
                    (tool, fingerprint, int(tests_pass), time.time()))

    def drift_tests(self) -> dict[str, tuple[str, bool]]:
        """tool -> (fingerprint, whether its tests passed); malformed rows are skipped."""
        rows = self._read("SELECT tool, fingerprint, tests_pass FROM drift_tests")
        return {str(tool): (str(fingerprint), bool(passed)) for tool, fingerprint, passed in rows if passed in (0, 1)}

    def set_drift_baseline(self, tool: str, source_sha: str, files: dict[str, str]) -> None:
        """The untracked dependency files a version was written against (path -> blob), first seen older than its commit."""
        self._write("INSERT OR REPLACE INTO drift_baselines(tool, source_sha, files) VALUES (?,?,?)",
                    (tool, source_sha, json.dumps(files, sort_keys=True)))

    def drift_baseline(self, tool: str, source_sha: str) -> dict[str, str] | None:
        """What `set_drift_baseline` kept for this version; None when nothing was kept (rows are untrusted)."""
        rows = self._read("SELECT files FROM drift_baselines WHERE tool = ? AND source_sha = ?", (tool, source_sha))
        if not rows:
            return None
        try:
            files = json.loads(rows[0][0])
        except (TypeError, ValueError):
            return None
        if not isinstance(files, dict):
            return None
        return {rel: blob for rel, blob in files.items() if isinstance(rel, str) and isinstance(blob, str)}
