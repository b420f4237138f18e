"""The git-ignored files around one writable run: stamped (small ones' bytes kept for /undo) before, compared after."""

from __future__ import annotations

import os
from pathlib import Path

from tui_agent.core.sandbox import ignored
from tui_agent.core.sandbox.venvs import project_venvs


def site_dirs(root: Path, used_venv: Path | None) -> list[Path]:
    """The site-packages folders of the project's virtualenvs and of the one runs use (their start-up files are
    checked after each writable run)."""
    venvs = [*project_venvs(root, used_venv), *([used_venv] if used_venv is not None else [])]
    return sorted({folder for venv in venvs for folder in (venv / "lib").glob("python3*/site-packages")})


def before(root: Path, used_venv: Path | None, *, venvs_read_only: bool) -> ignored.IgnoredState:
    """The ignored files before a writable run, small ones' bytes kept for /undo (not those of a virtualenv the run
    cannot write: `venvs_read_only`)."""
    state = ignored.take(root, site_dirs(root, used_venv))
    venvs = project_venvs(root, used_venv) if venvs_read_only else []
    inside = [os.path.relpath(venv, root) for venv in venvs]
    ignored.keep(root, state, [folder for folder in inside if not folder.startswith("..")])
    return state


def after(root: Path, used_venv: Path | None,
          start: ignored.IgnoredState) -> tuple[list[str], list[ignored.IgnoredChange]]:
    """(one note per change, for the person and the model; the changes, for the undo journal)."""
    now = ignored.take(root, site_dirs(root, used_venv))
    return ignored.report(start, now), ignored.changes(start, now)
