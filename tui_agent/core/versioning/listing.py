"""The project's files as git sees them (tracked and untracked, not ignored): what `@` mentions complete against."""

from __future__ import annotations

from pathlib import Path


def git_project_files(root: Path) -> list[str] | None:
    """Paths relative to `root` (`git ls-files --cached --others --exclude-standard`); None outside a repository."""
    import git  # here, not at the top: the TUI imports this module before its first paint, GitPython is not needed then

    try:
        output = git.Git(str(root)).ls_files("-z", "--cached", "--others", "--exclude-standard", "--", ".")
    except git.GitCommandError:  # not a repository (or git failed): the caller walks the folder instead
        return None
    return [name for name in str(output).split("\0") if name]  # run in `root`, so relative to it
