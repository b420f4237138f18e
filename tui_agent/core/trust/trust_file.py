"""trust.json: which folders the person trusted, and what each trusted project granted then (outside every project)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from tui_agent.core.sharedfile import read_json, update_json

TRUST_NAME = "trust.json"
T = TypeVar("T")


def config_dir() -> Path:
    """`$XDG_CONFIG_HOME/tuiagent` (default `~/.config/tuiagent`): the person's, never a project's."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tuiagent"


def trust_file() -> Path:
    return config_dir() / TRUST_NAME


def real_path(path: str | Path) -> str:
    """The key of a folder: absolute, symlinks followed (a link to a trusted folder is that folder)."""
    return os.path.realpath(os.path.expanduser(str(path)))


@dataclass(frozen=True)
class TrustEntry:
    """One trusted folder: `approved` maps each grant's key to its digest when trusted (None: a folder, trusted
    with everything below it whatever it holds)."""

    path: str
    approved: dict[str, str] | None


def _folders(data: Any) -> dict[str, Any]:
    folders = data.get("folders") if isinstance(data, dict) else None
    return folders if isinstance(folders, dict) else {}


def _read() -> dict[str, Any]:
    return _folders(read_json(trust_file()))


def _update(change: Callable[[dict[str, Any]], T]) -> T:
    """Read-modify-write of the folders under trust.json's lock: a concurrent `trust`/`untrust` is never undone."""

    def whole(data: Any) -> tuple[Any, T]:
        folders = _folders(data)
        result = change(folders)
        return {"version": 1, "folders": folders}, result

    return update_json(trust_file(), whole)


def _entry(path: str, raw: Any) -> TrustEntry | None:
    if not isinstance(raw, dict):
        return None
    approved = raw.get("approved")
    if approved is None and raw.get("folder") is True:
        return TrustEntry(path, None)
    if isinstance(approved, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in approved.items()):
        return TrustEntry(path, dict(approved))
    return None


def lookup(folder: str | Path) -> TrustEntry | None:
    """The entry that trusts `folder`: its own, else the nearest trusted folder above it (parent trust)."""
    folders = _read()
    current = Path(real_path(folder))
    own = _entry(str(current), folders.get(str(current)))
    if own is not None:
        return own
    for parent in current.parents:
        entry = _entry(str(parent), folders.get(str(parent)))
        if entry is not None and entry.approved is None:
            return entry
    return None


def record(folder: str | Path, approved: dict[str, str] | None) -> TrustEntry:
    """Trust `folder` (atomic write): with `approved` the grants seen, or None for a whole folder tree."""
    key = real_path(folder)

    def change(folders: dict[str, Any]) -> None:
        seen = folders.get(key, {}).get("seen_tools") if isinstance(folders.get(key), dict) else None
        folders[key] = {"folder": True} if approved is None else {"approved": dict(approved)}
        if approved is not None and isinstance(seen, dict):
            folders[key]["seen_tools"] = seen

    _update(change)
    return TrustEntry(key, approved)


def swap_seen_tools(folder: str | Path, tools: dict[str, str]) -> dict[str, str] | None:
    """Record `tools` (name -> digest) as the tool files last seen in this trusted project and return the ones
    recorded before (None when the project has no entry of its own, or none were recorded yet)."""
    key = real_path(folder)

    def change(folders: dict[str, Any]) -> Any:
        raw = folders.get(key)
        if not isinstance(raw, dict) or "approved" not in raw:
            return None
        before = raw.get("seen_tools")
        raw["seen_tools"] = dict(tools)
        return before if isinstance(before, dict) else None

    before = _update(change)
    return {str(k): str(v) for k, v in before.items()} if isinstance(before, dict) else None


def forget(folder: str | Path) -> bool:
    """Untrust `folder` itself; False when it had no entry of its own (a parent's trust is not changed)."""
    key = real_path(folder)
    return _update(lambda folders: folders.pop(key, None) is not None)


def amend_approved(folder: str | Path, change: Callable[[dict[str, str]], dict[str, str]]) -> bool:
    """Replace the approved grants of `folder`'s own entry by `change(approved)`, in one locked step (so a
    concurrent untrust is not undone); False when it has no entry of its own with grants."""
    key = real_path(folder)

    def update(folders: dict[str, Any]) -> bool:
        entry = _entry(key, folders.get(key))
        if entry is None or entry.approved is None:
            return False
        folders[key]["approved"] = dict(change(entry.approved))
        return True

    return _update(update)


