"""One git command's result and bounds: GitResult, how long a command may take, GitFailure (below the runner and the
git door, which both use them)."""

from __future__ import annotations

import os
from dataclasses import dataclass

from tui_agent.core.errors import TuiAgentError


@dataclass(frozen=True)
class GitResult:
    """Exit status and raw output of one git command."""

    status: int
    stdout: bytes
    stderr: str

    @property
    def ok(self) -> bool:
        return self.status == 0

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace").strip()


GIT_TIMEOUT_S = 120.0
"""No git command the catalog runs may take longer (a stuck filesystem, a filter that hangs): it is killed and its
stderr says which command timed out. `TUIAGENT_GIT_TIMEOUT_S` overrides it (read at each command)."""


def git_timeout_s(default: float = GIT_TIMEOUT_S) -> float:
    """The bound of one git command: `TUIAGENT_GIT_TIMEOUT_S` when it is a positive number, else `default`."""
    try:
        value = float(os.environ.get("TUIAGENT_GIT_TIMEOUT_S", ""))
    except ValueError:
        return default
    return value if value > 0 else default



class GitFailure(TuiAgentError, RuntimeError):
    """A git command failed where it should not have."""
