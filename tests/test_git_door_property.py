"""Property: a repository whose local configuration sets any subset of the command-running keys git documents (with
includes and hooks) runs none of them through any git tuiagent starts, before trust."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.git_door_helpers import EXTRAS, command_keys, hostile_repo, ran
from tests.test_git_door import every_door_operation
from tui_agent.core.rootfind import locate
from tui_agent.core.versioning.hookspath import hooks_path
from tui_agent.core.versioning.plainfiles import git_tracks, ignored_entries

KEYS = sorted([*command_keys(Path("/c"), Path("/p")), *EXTRAS])


@pytest.mark.usefixtures("untrusted_config")
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sets(st.sampled_from(KEYS), min_size=1))
def test_no_subset_of_command_running_keys_runs_through_the_door(keys: set[str]) -> None:
    base = Path(tempfile.mkdtemp(prefix="git-door-"))
    try:
        project, canaries = hostile_repo(base, sorted(keys))
        locate(project)
        ignored_entries(project)
        git_tracks(project, project / "notes.txt")
        hooks_path(project)
        every_door_operation(project)
        assert ran(canaries) == []
    finally:
        shutil.rmtree(base, ignore_errors=True)
