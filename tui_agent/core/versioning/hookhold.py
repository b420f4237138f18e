"""The hooks hold: after agent code could change project files, catalog commits that would run the user's git hooks wait for the person.

A git hook may run any project file (`./scripts/check.sh`, `npx lint-staged`, a pre-commit config's local
command). Once agent code has written the project without the person seeing the exact change (a run with the
project writable, an unreviewed `write_file`), tuiagent must not run those hooks on its own: the catalog's
commits are deferred (journaled, nothing lost) until the person releases the hold with `tuiagent tools commit`
or `/commit`, which runs the hooks and commits.

The record lives in `.agent/cache/`, which agent code cannot write on the bubblewrap tier. Its content is
untrusted: any entry at that path (even one that cannot be read) means "held".
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core import projectfs, sharedfile

HOLD_FILE = ".agent/cache/hooks-hold.json"
MAX_CAUSES = 20
MAX_CAUSE_CHARS = 200

_held_in_memory: dict[Path, list[str]] = {}  # causes whose record could not be written (read-only or full disk)


@dataclass(frozen=True)
class Hold:
    """Why commits with hooks are held: the agent writes since the person last released the hold, newest last."""

    causes: tuple[str, ...]

    def reason(self, hooks: list[str]) -> str:
        newest = self.causes[-1] if self.causes else "agent code wrote project files"
        more = f" and {len(self.causes) - 1} more" if len(self.causes) > 1 else ""
        return (f"your git hook{'s' if len(hooks) != 1 else ''} ({', '.join(hooks)}) would run project files that "
                f"agent code may have changed since (latest: {newest}{more}); look over the project's changes "
                "(git status, git diff), then run `tuiagent tools commit` (or /commit in the TUI) to run the hooks "
                "and commit")


def hold(root: Path, cause: str) -> str | None:
    """Record that agent code may have changed project files; a warning when the record could not be written."""
    root = Path(root).resolve()
    cause = f"{time.strftime('%H:%M:%S')} {_clean(cause)}"
    record = root / HOLD_FILE
    try:
        projectfs.make_dirs(record.parent)
        with sharedfile.folder_locked(record.parent):  # concurrent holds each keep their cause (no lock file to link)
            current = held(root)
            if current is not None and current.causes and current.causes[-1] == cause:
                return None  # the same run, recorded before and after it
            causes = [*(current.causes if current else ()), cause][-MAX_CAUSES:]
            projectfs.write_atomic(record, json.dumps({"causes": causes}).encode("utf-8"), sync=False)
    except OSError as exc:
        _held_in_memory.setdefault(root, []).append(cause)
        return (f"could not record in {HOLD_FILE} that agent code may have changed project files ({exc.strerror or exc}); "
                "catalog commits with git hooks wait in this process only")
    return None


def held(root: Path) -> Hold | None:
    """The hold on `root`, or None. Anything at the record's path counts, whatever it holds."""
    root = Path(root).resolve()
    record = root / HOLD_FILE
    memory = _held_in_memory.get(root, [])
    if not os.path.lexists(record):
        return Hold(tuple(memory)) if memory else None
    return Hold((*_read_causes(record), *memory))


def _read_causes(record: Path) -> tuple[str, ...]:
    try:
        data = json.loads(record.read_bytes()[:65536]) if record.is_file() and not record.is_symlink() else None
    except (OSError, ValueError):
        data = None
    causes = data.get("causes") if isinstance(data, dict) else None
    if not isinstance(causes, list) or not all(isinstance(cause, str) for cause in causes):
        return ("an unreadable hold record",)
    return tuple(_clean(cause) for cause in causes[-MAX_CAUSES:])


def _clean(text: str) -> str:
    """One short printable line (a cause names files agent code chose, and it is shown to the person)."""
    return "".join(char if char.isprintable() else "?" for char in " ".join(text.split()))[:MAX_CAUSE_CHARS]


def release(root: Path) -> Hold | None:
    """The person looked: lift the hold (returned, or None when there was none). Raises OSError when it cannot."""
    root = Path(root).resolve()
    current = held(root)
    record = root / HOLD_FILE
    if os.path.lexists(record):
        if record.is_dir() and not record.is_symlink():
            raise OSError(f"{HOLD_FILE} is a folder; remove it by hand")
        record.unlink()
    _held_in_memory.pop(root, None)
    return current
