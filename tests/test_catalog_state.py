"""state.db: usage aggregates, file reads, validation cache and tool versions, shared safely by two connections."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from tui_agent.core.catalog.startup import remove_stale_temp_files
from tui_agent.core.catalog.state import StateStore


def test_usage_reads_cache_and_versions(tmp_path: Path) -> None:
    tui, cli = StateStore(tmp_path / "state.db"), StateStore(tmp_path / "state.db")  # like the TUI and a CLI
    assert tui._db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tui.record_run("grep_logs", ok=True, duration_ms=10.0, files_read=["a.txt", "b.txt"], at=100.0)
    cli.record_run("grep_logs", ok=False, duration_ms=30.0, files_read=["a.txt"], at=200.0)
    stats = tui.usage()["grep_logs"]
    assert (stats.calls, stats.failures, stats.last_used, stats.mean_ms) == (2, 1, 200.0, 20.0)
    assert cli.files_read("grep_logs") == ["a.txt", "b.txt"]
    assert tui.usage().get("other") is None

    good = {"ok": True, "schema": {"name": "x", "description": "X.", "input_schema": {"type": "object", "properties": {}}}}
    cli.cache_validation("abc", 3, good)
    assert tui.cached_validation("abc", 3) == good
    assert tui.cached_validation("abc", 4) is None
    cli.cache_validation("forged", 3, {"ok": True, "schema": {"name": "x"}})  # not what the inspector returns
    assert tui.cached_validation("forged", 3) is None
    assert set(tui.all_cached_validations(3)) == {"abc"}

    tui.record_version("grep_logs", "sha1", None)
    tui.record_version("grep_logs", "sha1", "ignored: first sighting wins")
    assert cli.version_commit("grep_logs", "sha1") is None
    cli.set_version_commit("grep_logs", "sha1", "c0ffee" * 6 + "c0ff")
    assert tui.all_version_commits() == {("grep_logs", "sha1"): "c0ffee" * 6 + "c0ff"}
    cli.set_version_commit("grep_logs", "sha1", "--output=/tmp/x")  # read back as no commit, never passed to git
    assert tui.version_commit("grep_logs", "sha1") is None and tui.all_version_commits() == {("grep_logs", "sha1"): None}
    tui.close()
    cli.close()


def test_temp_files_of_dead_writers_are_removed(tmp_path: Path) -> None:
    live = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    try:
        kept = tmp_path / f".a.py.{live.pid}_x1.tmp"  # another process is writing it right now
        old = tmp_path / f".b.py.{live.pid}_x2.tmp"  # far too old to be a live write
        orphan = tmp_path / f".c.py.{dead.pid}_x3.tmp"
        unknown = tmp_path / ".d.py.k1ll3d.tmp"
        tool = tmp_path / "x.py"
        for path in (kept, old, orphan, unknown, tool):
            path.write_text("data")
        os.utime(old, (time.time() - 3600, time.time() - 3600))
        remove_stale_temp_files(tmp_path)
        assert sorted(p.name for p in tmp_path.iterdir()) == sorted([kept.name, tool.name])
    finally:
        live.kill()
        live.wait()


GOOD = {"ok": True, "schema": {"name": "t", "description": "T.", "input_schema": {"type": "object", "properties": {}}}}


def test_deferred_writes_are_one_transaction_that_reads_see(tmp_path: Path) -> None:
    store, other = StateStore(tmp_path / "state.db"), StateStore(tmp_path / "state.db")
    commits: list[str] = []
    store._db.set_trace_callback(lambda sql: commits.append(sql) if sql == "COMMIT" else None)
    with store.deferred():
        for index in range(100):
            store.cache_validation(f"sha{index}", 5, GOOD)
            store.record_version(f"t{index}", f"sha{index}", None)
        assert other.all_cached_validations(5) == {}  # nothing is committed yet
        assert commits == []
        assert store.version_commit("t7", "sha7") is None and len(store.all_cached_validations(5)) == 100  # a read saves first
        assert commits == ["COMMIT"] and len(other.all_cached_validations(5)) == 100
        with store.deferred():  # nested: saved by the outermost end
            store.record_version("late", "sha-late", None)
        assert ("late", "sha-late") not in other.all_version_commits()
    assert commits == ["COMMIT", "COMMIT"] and ("late", "sha-late") in other.all_version_commits()
    store.record_run("x", ok=True, duration_ms=1.0)  # outside: at once, as before
    assert other.usage()["x"].calls == 1
    store.close()
    other.close()


KILLED_MID_BATCH = """
import os, signal, sys
from tui_agent.core.catalog.state import StateStore
good = {"ok": True, "schema": {"name": "t", "description": "T.", "input_schema": {"type": "object", "properties": {}}}}
store = StateStore(__import__("pathlib").Path(sys.argv[1]))
with store.deferred():
    for index in range(50):
        store.cache_validation(f"kept{index}", 5, good)
    store.flush()
    for index in range(50):
        store.cache_validation(f"lost{index}", 5, good)
    os.kill(os.getpid(), signal.SIGKILL)
"""


def test_a_process_killed_inside_a_deferred_batch_leaves_a_usable_state_db(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", KILLED_MID_BATCH, str(tmp_path / "state.db")], capture_output=True)
    assert done.returncode == -9, done.stderr
    store = StateStore(tmp_path / "state.db")
    assert store._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert set(store.all_cached_validations(5)) == {f"kept{index}" for index in range(50)}  # the flushed batch, whole
    assert store.notices == []
    store.cache_validation("after", 5, GOOD)
    assert "after" in store.all_cached_validations(5)
    store.close()
