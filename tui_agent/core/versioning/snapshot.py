"""A read-only glance at the repository for the system prompt: branch, short status, the last commit subjects."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core.versioning.branch import current_branch
from tui_agent.core.versioning.gitrunner import git_timeout_s

MAX_STATUS_LINES = 20
RECENT_COMMITS = 5


@dataclass(frozen=True)
class RepoSnapshot:
    """`is_repo` False outside a git work tree (the other fields are then empty)."""

    is_repo: bool = False
    branch: str = ""
    status: list[str] = field(default_factory=list)  # `git status --short` lines, at most MAX_STATUS_LINES
    more_changes: int = 0
    recent: list[str] = field(default_factory=list)  # "abc1234 subject", newest first


def snapshot(root: Path) -> RepoSnapshot:
    """Nothing here writes: `--no-optional-locks` keeps `git status` from refreshing the index."""
    import git

    try:
        repo = git.Repo(root, search_parent_directories=True, expand_vars=False)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        return RepoSnapshot()
    bound = git_timeout_s()
    timed_out: list[str] = []
    try:
        try:
            status = repo.git.execute(["git", "--no-optional-locks", "status", "--short", "--untracked-files=normal", "--", "."],
                                      with_extended_output=False, as_process=False, stdout_as_string=True,
                                      kill_after_timeout=bound)
        except git.GitCommandError as error:
            status = ""
            if "did not complete" in str(error.stderr):  # killed at its bound (a slow fsmonitor hook, a stuck disk)
                timed_out.append(f"(git status did not finish within {bound:g} s: the work tree's state is unknown)")
        try:
            log = repo.git.log(f"-{RECENT_COMMITS}", "--format=%h %s", kill_after_timeout=bound)
        except git.GitCommandError:  # no commit yet, or killed at its bound
            log = ""
    finally:
        repo.close()
    lines = timed_out + [line for line in str(status).splitlines() if line.strip() and not line[3:].startswith(".agent/")]
    return RepoSnapshot(True, current_branch(root), lines[:MAX_STATUS_LINES], max(0, len(lines) - MAX_STATUS_LINES),
                        [line for line in str(log).splitlines() if line.strip()])
