"""Crash-safe file helpers: atomic write (one file, or many with one sync) and delete (temp file in the same folder + fsync + rename), putting a file back, the tool-file name filter, whether a temp file's writer is alive."""

from __future__ import annotations

import os
import secrets
import tempfile
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.pids import process_alive as process_alive


def atomic_write(path: Path, data: bytes) -> None:
    """Replace `path` with `data` so that a crash leaves either the old or the new content, never a mix (a link on
    the way in `.agent/`, or at `path`, raises projectfs.LinkRefused); the file
    keeps its mode (a new one follows the umask)."""
    projectfs.write_atomic(path, data)


def atomic_write_many(files: dict[Path, bytes]) -> None:
    """`atomic_write` for many files at once: one file-system sync for all of them instead of one fsync each.

    Every file is first written to a temp file beside it; once they are all durable (one `syncfs`, or an fsync
    each where syncfs is missing) they are renamed into place, then each folder is synced once.
    """
    temps: list[tuple[str, Path]] = []
    try:
        for path, data in files.items():
            projectfs.make_dirs(path.parent)
            projectfs.refuse_links(path)
            mode = projectfs.written_mode(path)
            fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.{os.getpid()}_", suffix=".tmp")
            temps.append((temp, path))
            os.fchmod(fd, mode)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        if temps and not _syncfs(Path(temps[0][0])):
            for temp, _path in temps:
                _fsync_file(temp)
        for temp, path in temps:
            os.replace(temp, path)
    except BaseException:
        for temp, _path in temps:
            try:
                os.unlink(temp)
            except FileNotFoundError:  # already renamed into place
                pass
        raise
    for folder in {path.parent for path in files}:
        fsync_dir(folder)


def _syncfs(inside: Path) -> bool:
    """Flush the whole file system holding `inside` (Linux syncfs); False when it is not available."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        syncfs = libc.syncfs
    except (OSError, AttributeError):
        return False
    fd = os.open(inside, os.O_RDONLY)
    try:
        return int(syncfs(fd)) == 0
    finally:
        os.close(fd)


def _fsync_file(name: str) -> None:
    fd = os.open(name, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_delete(path: Path) -> None:
    try:
        path.unlink()
    except FileNotFoundError:
        return
    fsync_dir(path.parent)


def fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some filesystems cannot fsync a folder; the rename itself is done
        pass
    finally:
        os.close(fd)


def tool_name_of(path: Path) -> str | None:
    """The tool name a `.py` path in `.agent/tools/` stands for (bad names show up as broken), None for temp files."""
    if path.suffix != ".py" or path.name.startswith("."):
        return None
    return path.stem


class Undo:
    """How to put a file back as it was: a hard link to the old version (no data copied, so it works on a full
    disk), or its bytes where the filesystem has no hard links. Call `restore()` on failure, `discard()` on success."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.previous = read_bytes_or_none(path)
        self.link: Path | None = None
        if self.previous is not None:
            link = path.with_name(f".{path.name}.{os.getpid()}_{secrets.token_hex(4)}.tmp")
            try:
                os.link(path, link)
                self.link = link
            except OSError:  # no hard links here: restore() writes the bytes back
                pass

    def delete(self) -> None:
        """Delete the file so that `restore` can bring it back even on a full disk: without a hard link it is moved
        aside to the link's name (a rename makes no new file), not unlinked."""
        if self.link is not None or self.previous is None:
            atomic_delete(self.path)
            return
        aside = self.path.with_name(f".{self.path.name}.{os.getpid()}_{secrets.token_hex(4)}.tmp")
        try:
            os.rename(self.path, aside)
        except FileNotFoundError:
            return
        self.link = aside
        fsync_dir(self.path.parent)

    def restore(self) -> None:
        if self.link is not None:
            os.replace(self.link, self.path)
            fsync_dir(self.path.parent)
        elif read_bytes_or_none(self.path) != self.previous:  # e.g. a delete refused on a read-only disk: as it was
            put_back(self.path, self.previous)

    def discard(self) -> None:
        if self.link is not None:
            self.link.unlink(missing_ok=True)


def put_back(path: Path, previous: bytes | None) -> None:
    """Undo a write: restore `previous` content, or delete the file when there was none."""
    if previous is None:
        atomic_delete(path)
    else:
        atomic_write(path, previous)


def read_bytes_or_none(path: Path) -> bytes | None:
    """The file's bytes, None when it is missing; a link on the way raises projectfs.LinkRefused (never read through)."""
    return projectfs.read_or_none(path)


def temp_writer_pid(temp: Path) -> int | None:
    """The pid of the process that made an atomic-write temp file (`.<name>.<pid>_<random>.tmp`), if recorded."""
    middle = temp.name[: -len(".tmp")].rsplit(".", 1)[-1]
    pid, sep, _ = middle.partition("_")
    return int(pid) if sep and pid.isdigit() else None
