"""Putting files back in the work tree from checkpoint entries: contents, executable bits, symlinks, deletions."""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Callable
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.errors import TuiAgentError
from tui_agent.core.textsafety import escaped
from tui_agent.core.versioning.checkpoints import Checkpoints, Entry

SYMLINK_MODE = "120000"
EXECUTABLE_MODE = "100755"
GITLINK_MODE = "160000"


class RestoreError(TuiAgentError):
    """A path cannot be put back safely (outside the work tree, a submodule)."""


def safe_path(work_tree: Path, relative: str) -> Path:
    """The absolute path of a repository path; refuses anything that would leave the work tree."""
    parts = relative.split("/")
    if not relative or relative.startswith("/") or any(part in ("", ".", "..", ".git") for part in parts):
        raise RestoreError(f"refusing to write {relative!r}: not a plain path inside the work tree")
    path = work_tree.joinpath(*parts)
    _refuse_linked_folder(work_tree, relative, parts[:-1])
    parent = Path(os.path.realpath(path.parent))
    if parent != work_tree and work_tree not in parent.parents:
        raise RestoreError(f"refusing to write {relative!r}: a symlink on the way leads out of the work tree")
    return path


def _refuse_linked_folder(work_tree: Path, relative: str, folders: list[str]) -> None:
    """Git never tracks a path through a symbolic link: a folder on the way that is now a link (agent code can leave
    `dir -> ~/.ssh` or `dir -> .git`, git-ignored) is refused, naming it, rather than written through."""
    walked = work_tree
    for index, part in enumerate(folders):
        walked = walked / part
        try:
            target = os.readlink(walked)
        except OSError:
            if not walked.is_dir():
                return  # missing (made by the write) or a file (refused by the write)
            continue
        raise _linked(relative, "/".join(folders[: index + 1]), target)


PROGRESS_EVERY = 200
"""A large undo reports its progress every this many files."""


def check_changes(checkpoints: Checkpoints, changes: dict[str, Entry | None]) -> list[str]:
    """Refuse (RestoreError) a change that cannot be made safely, before any is made; the removals, deepest first."""
    work_tree = checkpoints.work_tree
    removals = sorted((path for path, entry in changes.items() if entry is None), key=lambda p: -p.count("/"))
    for relative, entry in changes.items():
        path = safe_path(work_tree, relative)
        if entry is not None and entry[0] == GITLINK_MODE:
            raise RestoreError(f"{relative} is a submodule; tuiagent does not roll submodules back")
        if entry is not None and path.is_dir() and not path.is_symlink():
            leftovers = [inner for inner in path.rglob("*") if not inner.is_dir()
                         and inner.relative_to(work_tree).as_posix() not in removals]
            if leftovers:
                raise RestoreError(f"{relative} was a file and is now a folder holding {leftovers[0].relative_to(work_tree)}; "
                                   "move that folder away and undo again")
    return removals


def apply_changes(checkpoints: Checkpoints, changes: dict[str, Entry | None],
                  progress: Callable[[int, int], None] | None = None) -> list[str]:
    """Delete, then write, every changed path; returns the paths touched. Checks every path before changing any.
    `progress(done, total)` is called every PROGRESS_EVERY files (only for undos larger than that)."""
    work_tree = checkpoints.work_tree
    removals = check_changes(checkpoints, changes)
    done, total = 0, len(changes)

    def step() -> None:
        nonlocal done
        done += 1
        if progress is not None and total > PROGRESS_EVERY and (done % PROGRESS_EVERY == 0 or done == total):
            progress(done, total)

    for relative in removals:
        _remove(work_tree, safe_path(work_tree, relative))
        step()
    for relative, entry in sorted(changes.items()):
        if entry is not None:
            _write(checkpoints, safe_path(work_tree, relative), relative, entry)
            step()
    return sorted(changes)


def _remove(work_tree: Path, path: Path) -> None:
    remove_under(work_tree, path.relative_to(work_tree).as_posix(), prune=True)


def remove_under(work_tree: Path, relative: str, *, prune: bool = False) -> None:
    """Delete the file or link at `relative` (and with `prune` the folders left empty above it) through folder
    descriptors opened with no link followed: a folder swapped for a link after the check is refused, naming it."""
    folders, name = relative.split("/")[:-1], relative.split("/")[-1]
    try:
        folder = _open_folders(work_tree, relative, folders, create=False)
    except FileNotFoundError:
        return
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
        if not stat.S_ISDIR(info.st_mode):
            os.unlink(name, dir_fd=folder)
    except FileNotFoundError:
        pass
    finally:
        os.close(folder)
    for depth in range(len(folders), 0, -1) if prune else ():  # folders the turn created for its files go with them
        parent = _open_folders(work_tree, relative, folders[: depth - 1], create=False)
        try:
            os.rmdir(folders[depth - 1], dir_fd=parent)  # a link is never removed as a folder: ENOTDIR
        except OSError:
            return
        finally:
            os.close(parent)


def _open_folders(work_tree: Path, relative: str, folders: list[str], *, create: bool) -> int:
    """A descriptor of work_tree/folders, each opened with O_NOFOLLOW (made when missing and `create`); a link on
    the way raises RestoreError naming it."""
    fd = os.open(work_tree, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    for index, part in enumerate(folders):
        if create:
            try:
                os.mkdir(part, 0o777, dir_fd=fd)
            except FileExistsError:
                pass
        try:
            inner = os.open(part, _FOLDER_FLAGS, dir_fd=fd)
        except OSError:
            link = _link_target(fd, part)
            os.close(fd)
            if link is not None:
                raise _linked(relative, "/".join(folders[: index + 1]), link) from None
            raise
        os.close(fd)
        fd = inner
    return fd


_FOLDER_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _link_target(folder: int, name: str) -> str | None:
    try:
        return os.readlink(name, dir_fd=folder)
    except OSError:
        return None


def _linked(relative: str, link: str, target: str) -> RestoreError:
    return RestoreError(f"refusing to write {escaped(relative)}: {escaped(link)} is now a symbolic link (to "
                        f"{escaped(target)}) and undo never writes through a link; move {escaped(link)} away and "
                        "undo again")


def _write(checkpoints: Checkpoints, path: Path, relative: str, entry: Entry) -> None:
    mode, sha = entry
    data = checkpoints.blob(sha, relative)
    file_mode = None if mode == SYMLINK_MODE else (0o777 if mode == EXECUTABLE_MODE else 0o666) & ~projectfs.umask()
    write_under(checkpoints.work_tree, path.relative_to(checkpoints.work_tree).as_posix(), data, file_mode)


def write_under(work_tree: Path, relative: str, data: bytes, mode: int | None) -> None:
    """Put `data` at `relative` through a descriptor of its folder (made when missing, no link followed on the way:
    RestoreError names one): a file with `mode`, by a temporary file renamed over it; with `mode` None a symbolic
    link whose target is `data`."""
    parts = relative.split("/")
    folder = _open_folders(work_tree, relative, parts[:-1], create=True)
    name = parts[-1]
    try:
        _clear(folder, name, keep_file=mode is not None)
        if mode is None:
            os.symlink(data.decode("utf-8", errors="surrogateescape"), name, dir_fd=folder)
            return
        temp = f".{name}.{secrets.token_hex(4)}.undo"
        handle = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(data)
                os.fchmod(out.fileno(), mode)
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=folder)
            raise
    finally:
        os.close(folder)


def _clear(folder: int, name: str, *, keep_file: bool) -> None:
    """Make room for `name`: a link is removed (a file too when a link takes its place), a folder (checked before:
    only empty folders are left in it) too."""
    try:
        info = os.stat(name, dir_fd=folder, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode) or (stat.S_ISREG(info.st_mode) and not keep_file):
        os.unlink(name, dir_fd=folder)
    elif stat.S_ISDIR(info.st_mode):
        _remove_empty_tree(folder, name)


def _remove_empty_tree(parent: int, name: str) -> None:
    inner = os.open(name, _FOLDER_FLAGS, dir_fd=parent)
    try:
        for entry in os.scandir(inner):
            _remove_empty_tree(inner, entry.name)  # anything but an empty folder fails: ENOTDIR
    finally:
        os.close(inner)
    os.rmdir(name, dir_fd=parent)
