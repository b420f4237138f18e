"""Putting files back in the work tree from checkpoint entries: contents, executable bits, symlinks, deletions."""

from __future__ import annotations

import os
import tempfile
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
        link = "/".join(folders[: index + 1])
        raise RestoreError(f"refusing to write {escaped(relative)}: {escaped(link)} is now a symbolic link (to "
                           f"{escaped(target)}) and undo never writes through a link; move {escaped(link)} away and "
                           "undo again")


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
    if path.is_symlink() or path.is_file():
        path.unlink()
    parent = path.parent
    while parent != work_tree and parent.is_dir() and not any(parent.iterdir()):
        parent.rmdir()  # folders the turn created for its files go with them
        parent = parent.parent


def _write(checkpoints: Checkpoints, path: Path, relative: str, entry: Entry) -> None:
    mode, sha = entry
    if path.is_dir() and not path.is_symlink():
        _remove_tree(path)  # checked before: only empty folders are left in it
    path.parent.mkdir(parents=True, exist_ok=True)
    if mode == SYMLINK_MODE:
        target = checkpoints.blob(sha, relative).decode("utf-8", errors="surrogateescape")
        if path.is_symlink() or path.exists():
            path.unlink()
        os.symlink(target, path)
        return
    data = checkpoints.blob(sha, relative)
    handle, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".undo")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temp, (0o777 if mode == EXECUTABLE_MODE else 0o666) & ~projectfs.umask())
        if path.is_symlink():
            path.unlink()
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _remove_tree(folder: Path) -> None:
    for inner in sorted(folder.rglob("*"), key=lambda p: -len(p.parts)):
        inner.rmdir()
    folder.rmdir()

