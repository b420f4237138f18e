"""Snapshots of the work tree as git trees (through a temporary index), to diff the project-file edits of one turn."""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from pathlib import Path


EXCLUDE = ":(exclude).agent"


def _git(root: Path, *args: str, env: dict[str, str] | None = None) -> str:
    import git  # GitPython loads with the first diff, not with the app

    try:
        return git.Git(str(root)).execute(["git", *args], env=env, strip_newline_in_stdout=False)
    except git.CommandError as error:  # a failing command, or no git at all
        raise RuntimeError(str(error.stderr).strip() or f"git {' '.join(args)} failed") from error


def snapshot_tree(root: Path) -> str | None:
    """A tree id of the work tree as it is now (tracked and untracked, ignoring .gitignore'd files and `.agent/`).

    Uses a copy of the index under a temporary path, so the user's index, work tree and refs are untouched;
    None when `root` is not a git work tree.
    """
    try:
        git_dir = Path(_git(root, "rev-parse", "--absolute-git-dir").strip())
    except (RuntimeError, FileNotFoundError):
        return None
    with tempfile.TemporaryDirectory(prefix="tuiagent-index-") as folder:
        index = Path(folder) / "index"
        if (git_dir / "index").exists():
            shutil.copyfile(git_dir / "index", index)
        env = {**os.environ, "GIT_INDEX_FILE": str(index)}
        try:
            _git(root, "add", "-A", "--", ".", EXCLUDE, env=env)
            return _git(root, "write-tree", env=env).strip()
        except RuntimeError:
            return None


def diff_trees(root: Path, before: str, after: str) -> str:
    """The unified diff between two snapshots (empty when nothing changed)."""
    return _git(root, "diff", "--no-color", "--no-ext-diff", before, after, "--", ".", EXCLUDE)


def changed_paths(diff: str) -> list[str]:
    """The files a diff from `diff_trees` touches, in order."""
    return [line.split(" b/", 1)[1] for line in diff.splitlines() if line.startswith("diff --git ") and " b/" in line]


class TurnEdits:
    """Remembers the work tree at the start of a turn; `diff()` gives the project-file edits made since."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.before: str | None = None

    async def start(self) -> None:
        self.before = await asyncio.to_thread(snapshot_tree, self.root)

    async def diff(self) -> str | None:
        """None when no turn ran yet or the folder is not a git work tree."""
        if self.before is None:
            return None
        after = await asyncio.to_thread(snapshot_tree, self.root)
        if after is None:
            return None
        return await asyncio.to_thread(diff_trees, self.root, self.before, after)
