"""Which catalog paths a commit must never touch: unmerged index entries, skip-worktree (sparse) entries, conflict markers."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tui_agent.core.versioning.gitrunner import GitRunner

_OPEN = re.compile(rb"^<{7}(?: |$)", re.MULTILINE)
_MIDDLE = re.compile(rb"^={7}$", re.MULTILINE)
_CLOSE = re.compile(rb"^>{7}(?: |$)", re.MULTILINE)


def conflict_marker_line(data: bytes) -> int | None:
    """The 1-based line of the first `<<<<<<<` of a conflict block (`<<<<<<<` … `=======` … `>>>>>>>`), else None."""
    data = data.replace(b"\r\n", b"\n")
    for opened in _OPEN.finditer(data):
        middle = _MIDDLE.search(data, opened.end())
        if middle is not None and _CLOSE.search(data, middle.end()) is not None:
            return data.count(b"\n", 0, opened.start()) + 1
    return None


@dataclass(frozen=True)
class IndexFlags:
    """What the index says about some paths (repository-relative): which are unmerged, which are skip-worktree."""

    unmerged: frozenset[str]
    skip_worktree: frozenset[str]


def index_flags(runner: GitRunner, repo_paths: list[str]) -> IndexFlags:
    """One `git ls-files -t -s` over `repo_paths` (a sparse index is expanded, so sparse entries show as skip-worktree)."""
    if not repo_paths:
        return IndexFlags(frozenset(), frozenset())
    listed = runner.run("ls-files", "-z", "-t", "-s", "--", *repo_paths)
    if not listed.ok:  # an unreadable index: treat every path as unsafe rather than guess
        return IndexFlags(frozenset(repo_paths), frozenset())
    unmerged: set[str] = set()
    skipped: set[str] = set()
    for record in listed.stdout.decode("utf-8", errors="surrogateescape").split("\0"):
        if "\t" not in record:
            continue
        meta, path = record.split("\t", 1)
        fields = meta.split()
        if len(fields) != 4:
            continue
        tag, _mode, _sha, stage = fields
        if stage != "0":
            unmerged.add(path)
        elif tag == "S":
            skipped.add(path)
    return IndexFlags(frozenset(unmerged), frozenset(skipped))


def refusal(repo_path: str, content: bytes | None, flags: IndexFlags) -> str | None:
    """Why a commit must not write `content` (None = a deletion) at `repo_path`, or None when it may."""
    if repo_path in flags.unmerged:
        return (f"{repo_path} has unresolved conflicts in the index (edit it, then `git add {repo_path}` marks it "
                "resolved; the catalog commits nothing over a conflict)")
    if repo_path in flags.skip_worktree:
        return (f"{repo_path} is outside the sparse checkout or marked skip-worktree: its absence on disk is not a "
                "deletion and the catalog does not commit it")
    if content is not None:
        line = conflict_marker_line(content)
        if line is not None:
            return f"{repo_path} holds unresolved conflict markers (line {line}); resolve them first"
    return None
