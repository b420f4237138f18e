"""Read-only git questions about catalog and project files: history, content at a revision, diffs, changes since a commit."""

from __future__ import annotations

import difflib
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.versioning.gitrunner import GitRunner

FIELD = "\x1f"
RECORD = "\x1e"


@dataclass(frozen=True)
class HistoryEntry:
    """One commit touching a path: full sha, short sha, ISO author date, author name, subject; `deleted` when it removed
    the path, `merge` for a merge commit (listed when its version differs from one of its parents)."""

    rev: str
    short: str
    date: str
    author: str
    message: str
    deleted: bool = False
    merge: bool = False


class GitQueries:
    """Answers about paths given relative to the project root (`prefix` maps them to repository paths)."""

    def __init__(self, runner: GitRunner, prefix: str, project_root: Path) -> None:
        self.runner = runner
        self.prefix = prefix
        self.project_root = project_root

    def repo_path(self, path: str) -> str:
        return f"{self.prefix}{path}"

    def project_path(self, repo_path: str) -> str:
        return repo_path[len(self.prefix):] if self.prefix and repo_path.startswith(self.prefix) else repo_path

    def history(self, path: str) -> list[HistoryEntry]:
        if self.runner.head() is None:
            return []
        # --full-history: both sides of a merge, as `git log --full-history` lists them (the default simplification
        # follows one parent and hides the other side's versions).
        fmt = FIELD.join(["%H", "%h", "%aI", "%an", "%P", "%s"]) + RECORD
        log = self.runner.must("log", "--full-history", f"--format={fmt}", "--", self.repo_path(path))
        deletions = set(self.runner.must("log", "--full-history", "--diff-filter=D", "--format=%H", "--",
                                         self.repo_path(path)).text.split())
        entries: list[HistoryEntry] = []
        for record in log.stdout.decode("utf-8", errors="replace").split(RECORD):
            record = record.strip("\n")
            if not record:
                continue
            rev, short, date, author, parents, subject = record.split(FIELD, 5)
            entries.append(HistoryEntry(rev, short, date, author, subject, rev in deletions, len(parents.split()) > 1))
        return entries

    def is_shallow(self) -> bool:
        result = self.runner.run("rev-parse", "--is-shallow-repository")
        return result.ok and result.text == "true"

    def folder_blobs(self, folder: str) -> dict[str, str]:
        """File name -> blob sha of the files directly in `folder` (project-relative) in HEAD; {} without a commit."""
        if self.runner.head() is None:
            return {}
        listing = self.runner.must("ls-tree", "-z", "--full-tree", "HEAD", "--", self.repo_path(folder.rstrip("/")) + "/")
        blobs: dict[str, str] = {}
        for record in listing.stdout.decode("utf-8", errors="surrogateescape").split("\0"):
            if "\t" in record:
                meta, path = record.split("\t", 1)
                parts = meta.split()
                if len(parts) == 3 and parts[1] == "blob":
                    blobs[Path(path).name] = parts[2]
        return blobs

    def newest_commits(self, folder: str) -> dict[str, str]:
        """File name -> the newest commit touching it, for the files under `folder` (one `git log`)."""
        if self.runner.head() is None:
            return {}
        log = self.runner.must("log", f"--format={RECORD}%H", "--name-only", "--", self.repo_path(folder.rstrip("/")))
        found: dict[str, str] = {}
        for record in log.stdout.decode("utf-8", errors="surrogateescape").split(RECORD):
            lines = [line for line in record.splitlines() if line.strip()]
            for file in lines[1:]:
                found.setdefault(Path(file).name, lines[0].strip())
        return found

    def last_commit_for(self, path: str) -> str | None:
        if self.runner.head() is None:
            return None
        return self.runner.must("log", "-1", "--format=%H", "--", self.repo_path(path)).text or None

    def show(self, path: str, rev: str) -> bytes | None:
        sha = self.runner.verify_commit(rev)
        result = self.runner.run("cat-file", "blob", f"{sha}:{self.repo_path(path)}")
        return result.stdout if result.ok else None

    def diff(self, path: str, rev_a: str, rev_b: str | None = None) -> str:
        old = self.show(path, rev_a)
        if rev_b is None:
            file = self.project_root / path
            new = projectfs.read_or_none(file)  # a link in .agent/ is refused, never read through
            new_label = "work tree"
        else:
            new = self.show(path, rev_b)
            new_label = self.runner.verify_commit(rev_b)[:8]
        return unified_diff(path, old, new, self.runner.verify_commit(rev_a)[:8], new_label)

    def _pathspecs(self, paths: list[str]) -> list[str]:
        return [f":(glob){self.repo_path(path)}" for path in paths]

    def _untracked(self, paths: list[str]) -> list[str]:
        if not paths:
            return []
        result = self.runner.must("ls-files", "-z", "--others", "--exclude-standard", "--full-name", "--", *self._pathspecs(paths))
        return [item for item in result.stdout.decode("utf-8", errors="surrogateescape").split("\0") if item]

    def changed_files_since(self, rev: str, paths: list[str]) -> list[str]:
        if not paths:
            return []
        sha = self.runner.verify_commit(rev)
        tracked = self.runner.must("diff", "--no-renames", "--name-only", "-z", sha, "--", *self._pathspecs(paths))
        names = {item for item in tracked.stdout.decode("utf-8", errors="surrogateescape").split("\0") if item}
        names.update(self._untracked(paths))
        return sorted(self.project_path(name) for name in names)

    def diff_files_since(self, rev: str, paths: list[str]) -> str:
        if not paths:
            return ""
        sha = self.runner.verify_commit(rev)
        relative = [f"--relative={self.prefix}"] if self.prefix else []
        tracked = self.runner.must("diff", "--no-renames", "--no-color", "--no-ext-diff", "--no-textconv", *relative, sha, "--", *self._pathspecs(paths))
        parts = [tracked.stdout.decode("utf-8", errors="replace")]
        for name in self._untracked(paths):
            file = self.runner.work_tree / name
            content = projectfs.read_or_none(file) or b""
            parts.append(unified_diff(self.project_path(name), None, content, "absent", "work tree, untracked"))
        return "".join(part if part.endswith("\n") or not part else part + "\n" for part in parts)

    def deleted_files(self, folder: str) -> list[str]:
        """Project paths directly in `folder` that a commit deleted and HEAD does not have (newest deletion first)."""
        if self.runner.head() is None:
            return []
        repo_folder = self.repo_path(folder.rstrip("/") + "/")
        log = self.runner.must("log", "--diff-filter=D", "--name-only", "--format=", "--", repo_folder).text
        present = set(self.runner.tree_blobs("HEAD", [repo_folder]))
        seen: list[str] = []
        for repo_path in log.splitlines():
            repo_path = repo_path.strip()
            if repo_path and "/" not in repo_path[len(repo_folder):] and repo_path not in present and repo_path not in seen:
                seen.append(repo_path)
        return [self.project_path(repo_path) for repo_path in seen]

    def last_version_before_deletion(self, path: str) -> tuple[str, bytes] | None:
        if self.runner.head() is None:
            return None
        repo_path = self.repo_path(path)
        if self.runner.tree_blobs("HEAD", [repo_path]):
            return None
        deleting = self.runner.must("log", "-1", "--diff-filter=D", "--format=%H", "--", repo_path).text
        if not deleting:
            return None
        writer = self.runner.must("log", "-1", "--format=%H", f"{deleting}^", "--", repo_path).text
        content = self.show(path, writer) if writer else None
        return (writer, content) if content is not None else None


def unified_diff(path: str, old: bytes | None, new: bytes | None, old_label: str, new_label: str) -> str:
    """A unified diff of two versions of `path` (None = absent), git-style headers, empty when equal."""
    if old == new:
        return ""
    old_lines = (old or b"").decode("utf-8", errors="replace").splitlines(keepends=True)
    new_lines = (new or b"").decode("utf-8", errors="replace").splitlines(keepends=True)
    lines = difflib.unified_diff(
        old_lines, new_lines,
        fromfile=f"a/{path}" if old is not None else "/dev/null",
        tofile=f"b/{path}" if new is not None else "/dev/null",
        fromfiledate=old_label, tofiledate=new_label,
    )
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)
    return f"diff --git a/{path} b/{path}\n{text}"
