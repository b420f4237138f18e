"""The checked-out branch of the repository holding a project, as the header shows it."""

from __future__ import annotations

from pathlib import Path



def current_branch(root: Path) -> str:
    """The checked-out branch, `detached@abc1234`, or "" outside a git repository (or before its first commit
    on a detached HEAD)."""
    import git  # GitPython loads when the branch is first asked for, not with the app

    try:
        repo = git.Repo(root, search_parent_directories=True, expand_vars=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return ""
    try:
        if not repo.head.is_detached:
            return repo.head.ref.name
        return f"detached@{repo.head.commit.hexsha[:7]}"
    except (TypeError, ValueError):
        return ""
    finally:
        repo.close()
