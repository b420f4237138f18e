"""Git questions asked before a project is opened: which work tree holds a folder, and whether a path is ignored."""

from __future__ import annotations

import subprocess
from pathlib import Path

GIT_TIMEOUT_S = 10


def ask_git(start: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`git ARGS` run in `start` (raises OSError or TimeoutExpired when git cannot run)."""
    return subprocess.run(["git", *args], cwd=start, capture_output=True, text=True, timeout=GIT_TIMEOUT_S)
