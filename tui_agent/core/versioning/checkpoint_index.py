"""The checkpoint index kept between processes (outside every project), so a new tuiagent hashes only the files
changed since the last one did, not every untracked file again."""

from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path

from tui_agent.core.versioning.gitrunner import GitRunner


def saved_path(git_dir: Path, pathspec: list[str]) -> Path:
    """Where the index of this repository's checkpoints (of this project inside it) is kept:
    `$XDG_CACHE_HOME/tuiagent/checkpoint-index/<hash>` — outside the project, out of a sandboxed run's reach."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    key = hashlib.sha256("\0".join([os.path.realpath(git_dir), *pathspec]).encode("utf-8", "surrogateescape"))
    return base / "tuiagent" / "checkpoint-index" / key.hexdigest()[:32]


def seed(runner: GitRunner, index: Path, saved: Path, pathspec: list[str]) -> bool:
    """Start `index` from the saved one when it agrees with the person's index on what `git add -A` cannot
    correct (tracked files the ignore rules match, submodules); otherwise from a copy of the person's index.
    True when it started from the saved one."""
    user_index = runner.git_dir / "index"
    if saved.is_file() and not saved.is_symlink() and user_index.exists():
        try:
            shutil.copy2(saved, index)  # its mtime kept: git's racy-entry check needs it
        except OSError:
            pass
        else:
            ours = _special(runner, index, pathspec)
            if ours is not None and ours == _special(runner, user_index, pathspec):
                return True
            index.unlink()
    fresh(runner, index)
    return False


def fresh(runner: GitRunner, index: Path) -> None:
    """`index` as a copy of the person's index (none when they have none)."""
    index.unlink(missing_ok=True)
    user_index = runner.git_dir / "index"
    if user_index.exists():
        shutil.copy2(user_index, index)


def save(index: Path, saved: Path) -> None:
    """Keep `index` for the next process (a copy renamed into place: a reader never sees half of one)."""
    try:
        saved.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        partial = saved.with_name(f"{saved.name}.{os.getpid()}.tmp")
        shutil.copy2(index, partial)
        os.replace(partial, saved)
    except OSError:
        pass  # only the next start's speed depends on it


def _special(runner: GitRunner, index: Path, pathspec: list[str]) -> tuple[bytes, frozenset[bytes]] | None:
    """The tracked files of `index` that the ignore rules match, and its submodules (gitlinks)."""
    env = {"GIT_INDEX_FILE": str(index)}
    ignored = runner.run("ls-files", "-z", "-c", "-i", "--exclude-standard", "--", *pathspec, env=env)
    staged = runner.run("ls-files", "-z", "-s", "--", *pathspec, env=env)
    if not (ignored.ok and staged.ok):
        return None
    gitlinks = frozenset(entry.split(b"\t", 1)[-1] for entry in staged.stdout.split(b"\0") if entry.startswith(b"160000 "))
    return ignored.stdout, gitlinks
