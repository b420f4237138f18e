"""Commit trees and blobs read straight from git's object store (drift detection compares work-tree files against them).

Every read is one bounded git command (`gitrunner.GitRunner`: killed after `git_timeout_s()`, its stderr naming it)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import git

from tui_agent.core.versioning.gitrunner import GitRunner


def blob_sha(data: bytes) -> str:
    """The git blob id of `data` (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


class CommitTrees:
    """path → blob id of every file in a commit (cached: commits never change), and the bytes of a blob."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._trees: dict[str, dict[str, str]] = {}
        self._times: dict[str, float] = {}

    def _runner(self) -> GitRunner | None:
        try:
            return GitRunner(git.Repo(self.root, expand_vars=False))
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            return None

    def blobs(self, commit: str) -> dict[str, str]:
        """{} for an unknown commit or outside a repository (nothing to compare against)."""
        if commit not in self._trees:
            blobs: dict[str, str] = {}
            runner = self._runner()
            if runner is not None and not commit.startswith("-"):
                try:
                    listed = runner.run("ls-tree", "-r", "-z", "--full-tree", f"{commit}^{{commit}}")
                finally:
                    runner.repo.close()
                for record in listed.stdout.decode("utf-8", "surrogateescape").split("\0") if listed.ok else ():
                    meta, _, path = record.partition("\t")
                    fields = meta.split()
                    if len(fields) == 3 and fields[1] == "blob":
                        blobs[path] = fields[2]
            self._trees[commit] = blobs
        return self._trees[commit]

    def commit_time(self, commit: str) -> float:
        """When `commit` was made (POSIX seconds; 0 for an unknown commit or outside a repository); cached."""
        if commit not in self._times:
            runner = self._runner()
            when = 0.0
            if runner is not None and not commit.startswith("-"):
                try:
                    shown = runner.run("show", "-s", "--format=%ct", f"{commit}^{{commit}}", "--")
                finally:
                    runner.repo.close()
                if shown.ok and shown.text.isdigit():
                    when = float(shown.text)
            self._times[commit] = when
        return self._times[commit]

    def blob_bytes(self, blob: str) -> bytes | None:
        """None when the blob is not in this clone's objects (a teammate's uncommitted file) or git cannot say."""
        runner = self._runner()
        if runner is None or not all(c in "0123456789abcdef" for c in blob) or not blob:
            return None
        try:
            shown = runner.run("cat-file", "blob", blob)
        finally:
            runner.repo.close()
        return shown.stdout if shown.ok else None
