"""Silent-drift detection: which of a tool's dependency files changed since the commit its version was written at."""

from __future__ import annotations

import difflib
import hashlib
import os
from pathlib import Path
from typing import Iterable

from tui_agent.core import globs, projectfs
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
        self.refused: dict[str, str] = {}  # dependency -> why it was not read (a link leading out of the project)

    def fresh(self) -> None:
        """Forget what was seen of the work tree (call before each batch of checks; commits stay cached)."""
        self._globs.clear()
        self._worktree_blobs.clear()
        self.refused.clear()

    def _glob(self, pattern: str) -> list[str]:
        if pattern not in self._globs:
            self._globs[pattern] = globs.matching_paths(self.root, [globs.rooted(pattern)], files_only=True)
        return self._globs[pattern]

    def _matches_in(self, commit: str, pattern: str) -> list[str]:
        key = (commit, pattern)
        if key not in self._tree_matches:
            self._tree_matches[key] = [rel for rel in self.tree_blobs(commit) if globs.matches(rel, [globs.rooted(pattern)])]
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
        """The file's content as git sees it: a link's is its target (never read through: it may be a secret outside
        the project); a file behind a folder link leading out of the project is refused (noted in `refused`)."""
        path = self.root / rel
        try:
            projectfs.beneath(self.root, Path(rel).parent)
        except projectfs.LinkRefused as refused:
            self.refused[rel] = str(refused)
            return None
        if path.is_symlink():
            return os.fsencode(os.readlink(path))
        return projectfs.read_or_none(path) if path.is_file() else None

    def current_blob(self, rel: str) -> str | None:
        """The blob id of the work-tree file now (None: absent); cached until `fresh()`."""
        if rel not in self._worktree_blobs:
            data = self._worktree_bytes(rel)
            self._worktree_blobs[rel] = blob_sha(data) if data is not None else None
        return self._worktree_blobs[rel]

    def reference(self, commit: str | None, review_files: dict[str, str | None] | None) -> dict[str, str | None]:
        """What the dependency files are compared against: a review's blobs, else the files of `commit`."""
        if review_files is not None:
            return review_files
        return dict(self.tree_blobs(commit)) if commit else {}

    def compare(self, reference: dict[str, str | None], watched: Iterable[str]) -> tuple[list[str], list[str]]:
        """(changed, added): files the reference has that differ now (edited or deleted), and files it lacks that
        exist now. An added file alone is no drift (a new log matching `logs/*.log`): the tool's tests decide."""
        changed: list[str] = []
        added: list[str] = []
        for rel in watched:
            now = self.current_blob(rel)
            if reference.get(rel) is not None:
                if reference[rel] != now:
                    changed.append(rel)
            elif now is not None:
                added.append(rel)
        return changed, added

    def older_than(self, commit: str, rel: str) -> bool:
        """Whether the work-tree file was last modified before `commit` was made."""
        try:
            modified = (self.root / rel).stat().st_mtime
        except OSError:
            return False
        # Commit times have whole seconds: a file touched in the commit's own second counts as new.
        return int(modified) < self.trees.commit_time(commit)

    def fingerprint(self, source_sha: str, changed: Iterable[str]) -> str:
        """Names one version of a tool against one state of its changed (or added) dependency files."""
        digest = hashlib.sha256(source_sha.encode())
        for rel in sorted(changed):
            digest.update(f"\0{rel}\0{self.current_blob(rel)}".encode())
        return digest.hexdigest()[:20]

    def diff(self, reference: dict[str, str | None], changed: Iterable[str]) -> str:
        """A unified diff of the changed files from the reference blobs to the work tree."""
        chunks: list[str] = []
        for rel in changed:
            blob = reference.get(rel)
            if (self.root / rel).is_symlink() or rel in self.refused:
                chunks.append(f"{rel}: {self._link_note(rel)}\n")
                continue
            old, new = (self.trees.blob_bytes(blob) if blob else None), self._worktree_bytes(rel)
            if blob and old is None:  # an untracked file's or a teammate's reviewed content: not in git's objects
                chunks.append(f"{rel}: its earlier content (blob {blob[:8]}) is not in git's objects; as it is now:\n")
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

    def _link_note(self, rel: str) -> str:
        if rel in self.refused:
            return self.refused[rel]
        return (f"refused: {rel} is a symbolic link (to {os.readlink(self.root / rel)}); its target is not read "
                "(tuiagent compares the link itself, as git does)")
