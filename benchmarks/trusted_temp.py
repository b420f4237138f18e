"""Benchmarks measure trusted projects: a private config folder (discarded with the process) trusts the temp folder."""

from __future__ import annotations

import os
import tempfile


def trust_temporary_projects() -> None:
    """Point tuiagent (this process and the ones it starts) at a fresh config folder in which every project under the
    system's temp folder is trusted, so a generated project opens as a person's own would (not restricted); the
    person's real config (~/.config/tuiagent) is neither read nor written."""
    from tui_agent.core.trust import trust_folder

    os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="tuiagent-bench-config-")
    trust_folder(os.path.realpath(tempfile.gettempdir()))
