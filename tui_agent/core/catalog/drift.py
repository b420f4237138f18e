"""Silent-drift detection: which of a tool's dependency files changed since the commit its version was written at."""

from __future__ import annotations

import difflib
import hashlib
import fnmatch
from pathlib import Path
from typing import Iterable

from tui_agent.core.versioning.trees import CommitTrees, blob_sha

__all__ = ["AGENT_PREFIX", "DriftChecker", "blob_sha"]

AGENT_PREFIX = ".agent/"


class DriftChecker:
    """Compares dependency files in the work tree (committed or not) against a base commit; caches tree listings."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.trees = CommitTrees(root)
        self._tree_matches: dict[tuple[str, str], list[str]] = {}
        self._globs: dict[str, list[str]] = {}
        self._worktree_blobs: dict[str, str | None] = {}

    def fresh(self) -> None:
        """Forget what was seen of the work tree (call before each batch of checks; commits stay cached)."""
        self._globs.clear()
        self._worktree_blobs.clear()

    def _glob(self, pattern: str) -> list[str]:
        if pattern not in self._globs:
            self._globs[pattern] = [p.relative_to(self.root).as_posix() for p in self.root.glob(pattern) if p.is_file()]
        return self._globs[pattern]

    def _matches_in(self, commit: str, pattern: str) -> list[str]:
        key = (commit, pattern)
        if key not in self._tree_matches:
            self._tree_matches[key] = [rel for rel in self.tree_blobs(commit) if fnmatch.fnmatchcase(rel, pattern)]
        return self._tree_matches[key]

    def tree_blobs(self, commit: str) -> dict[str, str]:
        """path → blob id of every file in `commit` (cached: commits never change)."""
        return self.trees.blobs(commit)

    def watched_files(self, commit: str | None, globs: Iterable[str], files_read: Iterable[str]) -> list[str]:
        """DEPENDS_ON matches (in the work tree now or in the base commit) plus the files runs actually read."""
        patterns = [g for g in globs if g]
        found: set[str] = set()
        for pattern in patterns:
            found.update(self._glob(pattern))
            if commit:
                found.update(self._matches_in(commit, pattern))
        found.update(files_read)
        return sorted(p for p in found if not p.startswith((AGENT_PREFIX, ".git/")) and ".." not in p.split("/"))

    def _worktree_bytes(self, rel: str) -> bytes | None:
        path = self.root / rel
        return path.read_bytes() if path.is_file() else None

    def changed_files(self, commit: str | None, watched: Iterable[str]) -> list[str]:
        if not commit:
            return []
        blobs = self.tree_blobs(commit)
        changed = []
        for rel in watched:
            if rel not in self._worktree_blobs:
                data = self._worktree_bytes(rel)
                self._worktree_blobs[rel] = blob_sha(data) if data is not None else None
            if blobs.get(rel) != self._worktree_blobs[rel] and not self._unchanged_untracked(commit, rel, blobs):
                changed.append(rel)
        return changed

    def _unchanged_untracked(self, commit: str, rel: str, blobs: dict[str, str]) -> bool:
        """A file git never had at `commit` (untracked) counts as drifted only if it changed after that commit was made."""
        if rel in blobs or self._worktree_blobs.get(rel) is None:
            return False
        try:
            modified = (self.root / rel).stat().st_mtime
        except OSError:
            return False
        # Commit times have whole seconds: a file touched in the commit's own second counts as changed (reported, not hidden).
        return int(modified) < self.trees.commit_time(commit)

    def fingerprint(self, source_sha: str, changed: Iterable[str]) -> str:
        """Names one version of a tool against one state of its changed dependency files (after `changed_files`)."""
        digest = hashlib.sha256(source_sha.encode())
        for rel in sorted(changed):
            digest.update(f"\0{rel}\0{self._worktree_blobs.get(rel)}".encode())
        return digest.hexdigest()[:20]

    def old_bytes(self, commit: str, rel: str) -> bytes | None:
        blob = self.tree_blobs(commit).get(rel)
        return self.trees.blob_bytes(blob) if blob is not None else None

    def diff(self, commit: str, changed: Iterable[str]) -> str:
        """A unified diff of the changed files between `commit` and the work tree."""
        chunks: list[str] = []
        for rel in changed:
            old, new = self.old_bytes(commit, rel), self._worktree_bytes(rel)
            if (old is not None and b"\0" in old) or (new is not None and b"\0" in new):
                chunks.append(f"Binary file {rel} changed\n")
                continue
            old_lines = old.decode("utf-8", "replace").splitlines(keepends=True) if old is not None else []
            new_lines = new.decode("utf-8", "replace").splitlines(keepends=True) if new is not None else []
            fromfile = f"a/{rel}" if old is not None else "/dev/null"
            tofile = f"b/{rel}" if new is not None else "/dev/null"
            lines = list(difflib.unified_diff(old_lines, new_lines, fromfile, tofile))
            chunks.append("".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines))
        return "".join(chunks)
