"""Ignore files a search would read through a symbolic link leading out of the project, found before it runs.

`rg` opens `.gitignore`, `.ignore`, `.rgignore` and `.git/info/exclude` wherever they lead; a committed
`sub/.ignore -> ~/.ssh/id_rsa` would let the search's answers tell what the outside file says. `find` (which never
follows a link) lists every linked ignore file under the searched folder, the folders above it are looked at by name,
and each one leading out of the project is reported by projectfs's refusal, naming the link. The search then runs on
the walk, which reads ignore files through projectfs and so never reads those."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.agent.search_walk import IGNORE_FILES

EXCLUDE = ".git/info/exclude"
FIND_TIMEOUT_S = 30.0


def linked_ignore_files(root: Path, start: str) -> list[str] | None:
    """One message per ignore file the search of `start` (project-relative) would read through a link leading out of
    the project, naming the link; [] when there is none; None when the folder could not be looked through (no
    `find`, or it failed): then only the walk may search."""
    start = "" if start in ("", ".") else start.strip("/")
    parts = start.split("/") if start else []
    folders = ["/".join(parts[:index]) for index in range(len(parts) + 1)]
    names = [_join(folder, name) for folder in folders for name in (*IGNORE_FILES, EXCLUDE)]
    below = _found_below(root, start)
    if below is None:
        return None
    names += below
    messages: list[str] = []
    for name in dict.fromkeys(names):
        try:
            projectfs.beneath(root, Path(name))
        except projectfs.LinkRefused as refused:
            messages.append(f"{refused}; its ignore rules were not read")
        except OSError:
            continue
    return messages


def _join(folder: str, name: str) -> str:
    return f"{folder}/{name}" if folder else name


def _found_below(root: Path, start: str) -> list[str] | None:
    """Linked ignore files under `start`, and the info/exclude of each repository there (`find` follows no link)."""
    finder = shutil.which("find")
    top = root / start if start else root
    if not top.is_dir() or top.is_symlink():
        return []
    if finder is None:
        return None
    named = [arg for name in IGNORE_FILES for arg in ("-o", "-name", name)][1:]
    command = [finder, str(top), "(", "-name", ".git", "-prune", "-print0", ")", "-o",
               "(", "-type", "l", "(", *named, ")", "-print0", ")"]
    try:
        done = subprocess.run(command, capture_output=True, timeout=FIND_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:  # a folder it could not read: rg might, and would follow what is there
        return None
    found: list[str] = []
    for raw in done.stdout.split(b"\0"):
        if not raw:
            continue
        relative = os.path.relpath(os.fsdecode(raw), root)
        found.append(f"{relative}/info/exclude" if os.path.basename(relative) == ".git" else relative)
    return found
