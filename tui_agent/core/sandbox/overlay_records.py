"""Records of overlay runs in progress (`.agent/cache/overlays/`): what a run wrote before tuiagent died is applied at
the next sandbox start (before the quarantine sweep, which then moves any protected path it created)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.sandbox.attribution import collect
from tui_agent.core.tempfolders import AWAITING_RECOVERY
from tui_agent.core.sandbox.overlay import OverlayDirs
from tui_agent.core.catalog.files import process_alive

FOLDER = "overlays"


def record_of(cache_dir: Path, dirs: OverlayDirs) -> Path:
    return cache_dir / FOLDER / f"{os.getpid()}-{dirs.folder.name}.json"


def begin(cache_dir: Path, dirs: OverlayDirs) -> str | None:
    """Record an overlay as its worker starts (ahead of its run: nothing on the run's path). Its time is the record's
    own, earlier than the run: recovery then errs towards keeping what changed meanwhile. Unwritable: no record, and
    why (a crash during that run would leave its writes unapplied) is returned."""
    record = record_of(cache_dir, dirs)
    try:
        data = json.dumps({"folder": str(dirs.folder), "rootless": dirs.rootless}).encode("utf-8")
        projectfs.write_atomic(record, data, sync=False)  # no link followed in .agent/cache/
        (dirs.folder / AWAITING_RECOVERY).write_text(str(record), encoding="utf-8")  # other processes' sweeps keep it
    except OSError as error:
        return f"{error.strerror or error} ({record.parent})"
    return None


def finish(cache_dir: Path, dirs: OverlayDirs) -> None:
    """The overlay's run was applied (or never ran): forget it and delete its folders."""
    try:
        record_of(cache_dir, dirs).unlink(missing_ok=True)
    except OSError:
        pass  # a read-only project has no record to forget (`begin` could not write one)
    dirs.remove()


def recover(root: Path, cache_dir: Path) -> list[str]:
    """Apply the upper folders of runs whose tuiagent process died during them; one note per path it applied or kept.

    The record is hostile input (a file in the project): only an overlay folder this user made under the temporary
    folder is read, and only with the harvest's own rules."""
    folder = cache_dir / FOLDER
    if not folder.is_dir() or folder.is_symlink():
        return []
    notes: list[str] = []
    for record in sorted(folder.glob("*.json")):
        pid = record.name.split("-")[0]
        if pid.isdigit() and process_alive(int(pid)):
            continue
        found = _read(record)
        if found is not None:
            dirs, since = found
            try:
                harvest = collect(dirs, root, cache_dir, since)
            except OSError as error:  # a read-only project: its writes stay where they are, for a later start
                notes.append(f"what a run interrupted earlier wrote is in {dirs.upper}; it could not be applied "
                             f"to the project: {error.strerror or error}")
                continue
            notes += [f"{path}: written by a run interrupted earlier; applied" for path in harvest.paths]
            notes += [f"{note} (a run interrupted earlier)" for note in harvest.notes]
            dirs.remove()
        try:
            record.unlink(missing_ok=True)
        except OSError:
            pass  # a read-only project: the record stays; its folder is gone, the next start drops it
    return notes


def _read(record: Path) -> tuple[OverlayDirs, int] | None:
    try:
        raw = json.loads(projectfs.read_text(record))
        folder, rootless, since = Path(raw["folder"]), raw["rootless"], record.stat().st_mtime_ns
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if not isinstance(rootless, bool):
        return None
    temp = Path(os.path.realpath(tempfile.gettempdir()))
    real = Path(os.path.realpath(folder))
    if (real != folder or real.parent.parent != temp or not real.parent.name.startswith("tuiagent-sandbox-")
            or not real.name.startswith("overlay-")):
        return None
    try:
        if real.stat().st_uid != os.geteuid() or not (real / "upper").is_dir():
            return None
    except OSError:
        return None
    return OverlayDirs(real, rootless), since
