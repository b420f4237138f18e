"""Keeps tuiagent's local state out of git: ignore rules in the repository's own `info/exclude` (shared by its worktrees).

An untracked `.agent/.gitignore` would show on a branch older than the catalog and block `git checkout` of a branch
that tracks one; rules in `info/exclude` hold on every branch and never appear in the work tree. Plain file
operations (no git process): this runs at every start."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import stat
from pathlib import Path

LOCAL_STATE = ("state.db", "state.db-*", "sessions/", "runs/", "cache/", ".gitignore")
"""Under `.agent/`: local state, and `.gitignore` (an untracked copy left on an old branch is expendable)."""
HEADER = "# tuiagent: local state, never committed (written by tuiagent)"


def find_git(root: Path) -> tuple[Path, Path] | None:
    """(work tree top, common git dir) of the repository holding `root`, found by walking up; None outside one."""
    for folder in (root, *root.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir():
            return folder, dot_git
        if dot_git.is_file():  # a linked worktree or a submodule: "gitdir: <path>"
            try:
                text = dot_git.read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return None
            if not text.startswith("gitdir:"):
                return None
            git_dir = (folder / text.removeprefix("gitdir:").strip()).resolve()
            common = git_dir
            with contextlib.suppress(OSError, UnicodeDecodeError):
                common = (git_dir / (git_dir / "commondir").read_text(encoding="utf-8").strip()).resolve()
            return (folder, common) if looks_like_git_dir(common) else None
    return None


def looks_like_git_dir(folder: Path) -> bool:
    """A `.git` file is plain text anyone in the project could write: follow it only to a real git directory."""
    return (folder / "HEAD").is_file() and (folder / "objects").is_dir() and not folder.is_symlink()


def exclude_rules(prefix: str) -> list[str]:
    """The rules for a project at `prefix` (its path in the repository, "" or ending in "/")."""
    return [f"/{prefix}.agent/{item}" for item in LOCAL_STATE]


def ensure_excluded(root: Path) -> bool:
    """Add the rules for the project at `root` to its repository's `info/exclude` (once); True when they are there.

    False outside a repository or when `info/exclude` cannot be written (a read-only clone: nothing is written
    there either, so nothing shows as untracked)."""
    found = find_git(root.resolve())
    if found is None:
        return False
    top, common = found
    try:
        relative = root.resolve().relative_to(top.resolve()).as_posix()
    except ValueError:
        return False
    rules = exclude_rules("" if relative == "." else relative + "/")
    exclude = common / "info" / "exclude"
    try:
        exclude.parent.mkdir(exist_ok=True)
        return _add_missing(exclude, rules)
    except (OSError, UnicodeDecodeError):
        return False


def _add_missing(exclude: Path, rules: list[str]) -> bool:
    """Append the rules `exclude` lacks. A downloaded `.git` may make `info` or `info/exclude` a link (to
    ~/.bashrc) or a fifo: no link is followed (O_NOFOLLOW on both), nothing but a regular file is read or written,
    and nothing waits on a fifo (O_NONBLOCK); each raises OSError."""
    info = os.open(exclude.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        try:
            fd = os.open(exclude.name, os.O_RDWR | os.O_APPEND | os.O_CREAT | flags, 0o644, dir_fd=info)
        except PermissionError:  # a read-only clone: fine when the rules are there already
            fd = os.open(exclude.name, os.O_RDONLY | flags, dir_fd=info)
    finally:
        os.close(info)
    writable = fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDWR
    with os.fdopen(fd, "r+b" if writable else "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(exclude))
        text = handle.read().decode("utf-8")
        present = set(text.splitlines())
        missing = [rule for rule in rules if rule not in present]
        if missing:
            block = "\n".join([HEADER, *missing]) + "\n"
            handle.write((("" if not text or text.endswith("\n") else "\n") + block).encode("utf-8"))
    return True

