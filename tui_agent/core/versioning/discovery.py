"""Git questions asked before a project is opened: which work tree holds a folder, and whether a path is ignored."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tui_agent.core.versioning.gitdoor import run_git
from tui_agent.core.versioning.gitrunner import git_timeout_s

GIT_TIMEOUT_S = 10.0
"""The bound of these questions unless `TUIAGENT_GIT_TIMEOUT_S` sets another: they come before anything is shown."""


def ask_git(start: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`git ARGS` run in `start` (raises OSError or TimeoutExpired when git cannot run or does not answer in time)."""
    return run_git(start, *args, text=True, timeout=git_timeout_s(GIT_TIMEOUT_S))
