"""Opening `.agent/state.db`: a corrupt file is moved aside and rebuilt, an unwritable one is copied into memory."""

from __future__ import annotations

import os
import shutil
import sqlite3
import time
from pathlib import Path

from tui_agent.core import projectfs

CORRUPT_ERRORS = frozenset({"SQLITE_NOTADB", "SQLITE_CORRUPT"})


def connect(path: Path, schema: str) -> sqlite3.Connection:
    db = sqlite3.connect(str(path), timeout=10.0, check_same_thread=False, isolation_level=None)
    try:
        db.execute("PRAGMA busy_timeout = 10000")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.executescript(schema)
    except BaseException:
        db.close()
        raise
    return db


def is_corrupt(error: sqlite3.Error) -> bool:
    return getattr(error, "sqlite_errorname", "") in CORRUPT_ERRORS


def move_aside(path: Path) -> Path:
    """Rename the database and its WAL files to `state.db-corrupt-<time>` (git-ignored like every `state.db-*`)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}-corrupt-{stamp}")
    for suffix in ("", "-wal", "-shm"):
        part = path.with_name(path.name + suffix)
        if part.exists():
            part.rename(target.with_name(target.name + suffix))
    return target


def disk_full(folder: Path) -> bool:
    try:
        return shutil.disk_usage(folder).free < 256 * 1024
    except OSError:
        return False


def _refuse_links(path: Path) -> None:
    """Make the folder (no link followed) and refuse a link at the database or the files sqlite opens beside it."""
    try:
        projectfs.make_dirs(path.parent)
    except projectfs.LinkRefused:
        raise
    except OSError:
        pass  # a read-only folder: connect says what is wrong
    for suffix in ("", "-wal", "-shm", "-journal"):
        projectfs.refuse_links(path.with_name(path.name + suffix))


def open_state_db(path: Path, schema: str, notices: list[str]) -> sqlite3.Connection:
    """The state database; problems are reported as one line each in `notices`, never raised."""
    shown = f".agent/{path.name}"
    try:
        _refuse_links(path)
    except projectfs.LinkRefused as refused:
        notices.append(f"{refused}; usage counts and validations are kept in memory for this session only "
                       "(nothing was read or written through it)")
        return memory_copy(None, schema)
    try:
        return connect(path, schema)
    except sqlite3.DatabaseError as error:
        reason = str(error)
        if is_corrupt(error):
            try:
                moved = move_aside(path)
                database = connect(path, schema)
            except (sqlite3.Error, OSError) as again:
                reason = f"{error}, and it could not be rebuilt: {again}"
            else:
                notices.append(f"{shown} was damaged ({error}); moved aside to .agent/{moved.name} and rebuilt "
                               "(usage counts and cached validations start again)")
                return database
    except OSError as error:
        reason = error.strerror or str(error)
    if not os.access(path.parent, os.W_OK):
        reason = f"the folder {path.parent.name}/ is read-only: {reason}"
    elif disk_full(path.parent):
        reason = f"the disk is full: {reason}"
    notices.append(f"{shown} cannot be written ({reason}); usage counts and validations are kept in memory "
                   "for this session only")
    return memory_copy(path, schema)


def memory_copy(path: Path | None, schema: str) -> sqlite3.Connection:
    """An in-memory database holding what the file has (if it can be read at all)."""
    memory = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
    if path is not None and path.is_file():
        try:
            source = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True)
            try:
                source.backup(memory)
            finally:
                source.close()
        except sqlite3.Error:  # unreadable as well: start empty
            pass
    try:
        memory.executescript(schema)
    except sqlite3.Error:  # a copied but damaged schema: start empty
        memory.close()
        memory = sqlite3.connect(":memory:", check_same_thread=False, isolation_level=None)
        memory.executescript(schema)
    return memory
