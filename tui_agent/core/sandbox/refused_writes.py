"""Saying why a writable run's write failed with "Read-only file system" (or "Device or resource busy": a rename
over a read-only bind): the protected path its output names, and why that path is read-only, in one line the
person and the model both see."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from tui_agent.core.sandbox import protected
from tui_agent.core.sandbox.leftovers import GIT, GIT_READ_ONLY, REFUSED
from tui_agent.core.sandbox.policy import RunResult

REFUSALS = ("read-only file system", "device or resource busy")
"""How a write to a read-only bind fails: in place, or by renaming a new version over it (git's lock files)."""
MAX_NOTES = 5

_WHY_GIT_INSIDE = ("git's config, hooks and info/ decide what git runs on your machine: they stay read-only even for "
                   "an approved run (the rest of .git, what a commit needs, is writable)")
_WHY_GIT = ("git's folder is read-only for this run: only a run whose writes go through an overlay (see `tuiagent "
            "sandbox status`) may commit, and then never change .git/config, hooks or info/")
_WHY = "a protected path (it decides what runs on your machine, or is tuiagent's own): read-only for agent code"


def refused_writes(root: Path, texts: Iterable[str], *, git_commits: bool) -> list[str]:
    """One note per protected path a line of `texts` saying one of REFUSALS names; `git_commits`: the run could
    write what commits need in `.git`."""
    lines = [line for text in texts if text for line in text.splitlines()
             if any(refusal in line.lower() for refusal in REFUSALS)]
    if not lines:  # the usual run: no protected path to list
        return []
    entries = sorted({*protected.protected_paths(root), *(f"{GIT}/{name}" for name in GIT_READ_ONLY)},
                     key=len, reverse=True)
    notes: list[str] = []
    for line in lines:
        entry = _named(line, entries, str(root))
        note = f"{REFUSED}writing {entry} ({_why(entry, git_commits)})" if entry is not None else None
        if note is not None and note not in notes:
            notes.append(note)
    return notes[:MAX_NOTES]


def _named(line: str, entries: list[str], root: str) -> str | None:
    """The longest protected entry `line` names as a path (relative, or under the project's absolute path)."""
    text = line.replace(root.rstrip("/") + "/", "")
    for entry in entries:
        if re.search(rf"(^|[\s'\"`(:=./]){re.escape(entry)}($|[\s'\"`):/,])", text):
            return entry
    return None


def _why(entry: str, git_commits: bool) -> str:
    if entry.startswith(GIT + "/"):
        return _WHY_GIT_INSIDE if git_commits else _WHY_GIT
    if entry == GIT:
        return _WHY_GIT
    return _WHY


def run_texts(result: RunResult) -> list[str]:
    """What a run said: its output and error, and a shell command's own output (run_shell's report)."""
    texts = [result.stdout, result.stderr, result.error or ""]
    if isinstance(result.value, dict):
        texts += [str(result.value.get(name, "")) for name in ("stdout", "stderr")]
    return texts
