"""Commit trees and blobs read straight from git's object store (drift detection compares work-tree files against them)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import git


def blob_sha(data: bytes) -> str:
    """The git blob id of `data` (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class CommitTrees:
    """path → blob id of every file in a commit (cached: commits never change), and the bytes of a blob."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._trees: dict[str, dict[str, str]] = {}
        self._times: dict[str, float] = {}

    def _repo(self) -> git.Repo | None:
        try:
            return git.Repo(self.root)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            return None

    def blobs(self, commit: str) -> dict[str, str]:
        """{} for an unknown commit or outside a repository (nothing to compare against)."""
        if commit not in self._trees:
            blobs: dict[str, str] = {}
            repo = self._repo()
            if repo is not None:
                try:
                    for item in repo.commit(commit).tree.traverse():
                        if isinstance(item, git.Blob):
                            blobs[str(item.path)] = item.hexsha
                except (ValueError, git.BadName, git.GitCommandError):  # an unknown commit has no files to compare
                    pass
                finally:
                    repo.close()
            self._trees[commit] = blobs
        return self._trees[commit]

    def commit_time(self, commit: str) -> float:
        """When `commit` was made (POSIX seconds; 0 for an unknown commit or outside a repository); cached."""
        if commit not in self._times:
            repo = self._repo()
            when = 0.0
            if repo is not None:
                try:
                    when = float(repo.commit(commit).committed_date)
                except (ValueError, git.BadName, git.GitCommandError):
                    pass
                finally:
                    repo.close()
            self._times[commit] = when
        return self._times[commit]

    def blob_bytes(self, blob: str) -> bytes | None:
        repo = self._repo()
        if repo is None:
            return None
        try:
            data: bytes = repo.odb.stream(bytes.fromhex(blob)).read()
            return data
        except (ValueError, OSError, git.BadObject):  # not in this clone's objects (a teammate's uncommitted file)
            return None
        finally:
            repo.close()
