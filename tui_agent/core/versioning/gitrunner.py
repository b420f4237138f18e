"""A thin runner of git commands through GitPython (`Repo.git.execute`): bytes in, bytes out, extra environment, no exceptions."""

from __future__ import annotations

import tempfile
from pathlib import Path

from typing import TYPE_CHECKING

from tui_agent.core.versioning.gitresult import (
    GIT_TIMEOUT_S as GIT_TIMEOUT_S,
    GitFailure as GitFailure,
    GitResult as GitResult,
    git_timeout_s as git_timeout_s,
)

if TYPE_CHECKING:  # GitPython loads with the first repository opened, not with every `tuiagent` start
    import git



class GitRunner:
    """Runs `git <args>` in a repository's work tree via GitPython."""

    def __init__(self, repo: git.Repo, extra_env: dict[str, str] | None = None, *, approved: bool = False) -> None:
        """`repo` comes from `gitdoor.open_repo` (its environment is the door's); `extra_env` goes on top of it
        (`for_commits`: the person's approved configuration)."""
        self.repo = repo
        self.work_tree = Path(repo.working_tree_dir or repo.git_dir).resolve()
        self.git_dir = Path(repo.git_dir).resolve()
        self.common_dir = Path(repo.common_dir).resolve()
        self.extra_env = extra_env or {}
        self.approved = approved
        if repo.working_tree_dir is not None and repo.git.working_dir != repo.working_tree_dir:
            # GitPython's Git() expands `$VAR` in its folder: in `ci$HOME` every command ran in another folder
            repo.git._working_dir = repo.working_tree_dir

    def for_commits(self, root: Path) -> GitRunner:
        """A runner for the commits made for the person: git as the person configured it (hooks, filters, signing)
        once trust approved the repository's command-running configuration as it is now; the door's otherwise."""
        from tui_agent.core.versioning.gitdoor import commit_env

        env = commit_env(root, self.work_tree, self.git_dir, self.common_dir)
        return GitRunner(self.repo, env, approved=env is not None)

    def run(self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> GitResult:
        from tui_agent.core.versioning.gitdoor import GitConfigError, repo_env

        command = ["git", *args]  # the door's environment is read afresh: config changed since open is neutralised too
        try:
            env = {**repo_env(self.work_tree, self.git_dir, self.common_dir), **self.extra_env, **(env or {})}
        except GitConfigError as broken:  # the config broke since the repository was opened: git is not run
            return GitResult(128, b"", str(broken))
        if input is None:
            status, out, err = self.repo.git.execute(
                command, with_extended_output=True, with_exceptions=False, stdout_as_string=False,
                strip_newline_in_stdout=False, env=env, kill_after_timeout=git_timeout_s(),
            )
        else:
            with tempfile.TemporaryFile() as stdin:
                stdin.write(input)
                stdin.seek(0)
                status, out, err = self.repo.git.execute(
                    command, istream=stdin, with_extended_output=True, with_exceptions=False,
                    stdout_as_string=False, strip_newline_in_stdout=False, env=env, kill_after_timeout=git_timeout_s(),
                )
        error = err.decode("utf-8", errors="replace") if isinstance(err, bytes) else str(err)
        return GitResult(int(status or 0), bytes(out or b""), error.strip())

    def must(self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> GitResult:
        """Run and raise GitFailure when git exits non-zero."""
        result = self.run(*args, input=input, env=env)
        if not result.ok:
            raise GitFailure(f"git {' '.join(args[:2])} failed: {result.stderr or result.status}")
        return result

    def head(self) -> str | None:
        result = self.run("rev-parse", "-q", "--verify", "HEAD^{commit}")
        return result.text if result.ok and result.text else None

    def branch_ref(self) -> str | None:
        result = self.run("symbolic-ref", "-q", "HEAD")
        return result.text if result.ok and result.text else None

    def verify_commit(self, rev: str) -> str:
        """The full sha of `rev`; ValueError if it names no commit."""
        if rev.startswith("-"):
            raise ValueError(f"not a revision: {rev!r}")
        result = self.run("rev-parse", "-q", "--verify", f"{rev}^{{commit}}")
        if not result.ok or not result.text:
            raise ValueError(f"unknown revision {rev!r}")
        return result.text

    def tree_blobs(self, rev: str, paths: list[str]) -> dict[str, tuple[str, str]]:
        """path -> (mode, blob sha) for those of `paths` present in `rev`'s tree."""
        if not paths:
            return {}
        result = self.must("ls-tree", "-z", "--full-tree", rev, "--", *paths)
        blobs: dict[str, tuple[str, str]] = {}
        for record in result.stdout.decode("utf-8", errors="surrogateescape").split("\0"):
            if not record:
                continue
            meta, path = record.split("\t", 1)
            mode, kind, sha = meta.split()
            if kind == "blob":
                blobs[path] = (mode, sha)
        return blobs
