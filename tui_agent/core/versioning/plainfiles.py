"""Quick questions to git about plain files, without GitPython (called from the sandbox on writable runs): which paths
git ignores (all of them, or among given ones), and whether it tracks a path."""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

from tui_agent.core.versioning.gitdoor import run_git

log = logging.getLogger(__name__)


def plain_env() -> dict[str, str]:
    """A bare environment (the person's variables are not needed to list files)."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C"}


def ignored_entries(root: Path) -> list[str]:
    """The paths git ignores in the work tree (whole folders as one entry), relative to `root`."""
    try:
        done = run_git(root, "ls-files", "-z", "--others", "--ignored", "--exclude-standard", "--directory",
                       timeout=30, env=plain_env())
    except subprocess.TimeoutExpired:
        log.warning("git ls-files --ignored did not finish within 30 s in %s: no ignored path is known", root)
        return []
    except OSError:
        return []
    if done.returncode != 0:
        return []
    return [entry.rstrip("/") for entry in done.stdout.decode(errors="surrogateescape").split("\0") if entry]


def ignored_among(root: Path, paths: list[str]) -> set[str]:
    """Which of `paths` (relative, existing or not) git ignores in the work tree at `root`; a tracked file never is."""
    try:
        done = run_git(root, "check-ignore", "-z", "--stdin", timeout=30, env=plain_env(),
                       stdin="\0".join(paths).encode(errors="surrogateescape"))
    except (OSError, subprocess.TimeoutExpired):
        return set()
    return {entry for entry in done.stdout.decode(errors="surrogateescape").split("\0") if entry}


def git_tracks(root: Path, path: Path) -> bool:
    """Whether git tracks `path` (a folder: anything in it; a symlink: the link itself) in the repository at `root`.

    Unsure (git missing or failing) counts as tracked: the virtualenv is then not used."""
    try:
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(root))
    except ValueError:
        return False
    if relative.startswith(".."):
        return False
    if not (root / ".git").exists():
        return False
    try:
        done = run_git(root, "ls-files", "-z", "--", relative, timeout=10, env=plain_env())
    except subprocess.TimeoutExpired:
        log.warning("git ls-files did not finish within 10 s for %s: taken as tracked", path)
        return True
    except OSError:
        return True
    return done.returncode != 0 or bool(done.stdout)
