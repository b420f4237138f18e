"""A thin runner of git commands through GitPython (`Repo.git.execute`): bytes in, bytes out, extra environment, no exceptions."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from typing import TYPE_CHECKING

from tui_agent.core.errors import TuiAgentError

if TYPE_CHECKING:  # GitPython loads with the first repository opened, not with every `tuiagent` start
    import git


@dataclass(frozen=True)
class GitResult:
    """Exit status and raw output of one git command."""

    status: int
    stdout: bytes
    stderr: str

    @property
    def ok(self) -> bool:
        return self.status == 0

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace").strip()


GIT_TIMEOUT_S = 120.0
"""No git command the catalog runs may take longer (a stuck filesystem, a filter that hangs): it is killed and its
stderr says which command timed out. `TUIAGENT_GIT_TIMEOUT_S` overrides it (read at each command)."""


def git_timeout_s(default: float = GIT_TIMEOUT_S) -> float:
    """The bound of one git command: `TUIAGENT_GIT_TIMEOUT_S` when it is a positive number, else `default`."""
    try:
        value = float(os.environ.get("TUIAGENT_GIT_TIMEOUT_S", ""))
    except ValueError:
        return default
    return value if value > 0 else default


class GitRunner:
    """Runs `git <args>` in a repository's work tree via GitPython."""

    def __init__(self, repo: git.Repo) -> None:
        self.repo = repo
        self.work_tree = Path(repo.working_tree_dir or repo.git_dir).resolve()
        self.git_dir = Path(repo.git_dir).resolve()
        self.common_dir = Path(repo.common_dir).resolve()

    def run(self, *args: str, input: bytes | None = None, env: dict[str, str] | None = None) -> GitResult:
        command = ["git", *args]
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


class GitFailure(TuiAgentError, RuntimeError):
    """A git command failed where it should not have."""
