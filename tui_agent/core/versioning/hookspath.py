"""Where git runs hooks from (core.hooksPath honoured), when that folder is inside the project."""

from __future__ import annotations

import logging
import os
import subprocess
from pathlib import Path

from tui_agent.core.versioning.gitdoor import run_git

GIT_TIMEOUT_S = 10
log = logging.getLogger(__name__)

_hooks_cache: dict[tuple[str, int], str | None] = {}


def _git_config_stamp(root: Path) -> int:
    """Changes whenever the repository's config may have changed (the cache key of the hooks path).

    Plain `os.stat` on strings: this runs before every sandboxed run."""
    folder = str(root)
    while True:
        for candidate in (os.path.join(folder, ".git", "config"), os.path.join(folder, ".git")):
            try:
                return os.stat(candidate).st_mtime_ns
            except OSError:
                continue
        parent = os.path.dirname(folder)
        if parent == folder:
            return 0
        folder = parent


def hooks_path(root: Path) -> str | None:
    """The hooks folder git runs (honours core.hooksPath) relative to `root`, when it is inside the project."""
    key = (str(root), _git_config_stamp(root))
    if key in _hooks_cache:
        return _hooks_cache[key]
    found: str | None = None
    try:
        done = run_git(root, "rev-parse", "--show-toplevel", "--git-path", "hooks", text=True, timeout=GIT_TIMEOUT_S,
                       env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")},
                       reveal_hooks=True)
        lines = done.stdout.splitlines() if done.returncode == 0 else []
        if len(lines) == 2:
            hooks = Path(lines[1]) if Path(lines[1]).is_absolute() else Path(lines[0]) / lines[1]
            real = Path(os.path.realpath(hooks))
            if real.is_relative_to(root) and real != root:
                found = real.relative_to(root).as_posix()
    except subprocess.TimeoutExpired:
        log.warning("git rev-parse --git-path hooks did not finish within %s s in %s", GIT_TIMEOUT_S, root)
        found = None
    except OSError:
        found = None
    _hooks_cache.clear()
    _hooks_cache[key] = found
    return found
