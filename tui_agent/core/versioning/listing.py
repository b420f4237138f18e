"""The project's files as git sees them (tracked and untracked, not ignored): what `@` mentions complete against."""

from __future__ import annotations

from pathlib import Path


def git_project_files(root: Path) -> list[str] | None:
    """Paths relative to `root` (`git ls-files --cached --others --exclude-standard`); None outside a repository."""
    import subprocess

    from tui_agent.core.versioning.gitdoor import run_git

    try:
        done = run_git(root, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", ".")
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:  # not a repository (or git failed): the caller walks the folder instead
        return None
    output = done.stdout.decode("utf-8", errors="surrogateescape")
    return [name for name in output.split("\0") if name]  # run in `root`, so relative to it
