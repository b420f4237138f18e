"""Prefix rules never cover a redirection that writes a file (issue 23): named cases, and a property checked by
running every covered command in a real shell under bubblewrap and looking for files it wrote."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from tests.hostile.redirections import ALLOWED, REFUSED
from tui_agent.core.agent.permission_rules import parse_rule


@pytest.mark.parametrize(("rule", "command"), REFUSED)
def test_a_prefix_rule_never_covers_a_redirection_to_a_file(rule: str, command: str) -> None:
    assert not parse_rule(rule).matches("run_shell", command, network=False)


@pytest.mark.parametrize(("rule", "command"), ALLOWED)
def test_harmless_or_named_redirections_stay_covered(rule: str, command: str) -> None:
    assert parse_rule(rule).matches("run_shell", command, network=False)


def run_confined(command: str, workdir: Path) -> subprocess.CompletedProcess[str]:
    """`command` in bash with / read-only and `workdir` the only writable folder (nothing else can be written)."""
    return subprocess.run(
        ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--bind", str(workdir), str(workdir),
         "--chdir", str(workdir), "--unshare-all", "--die-with-parent", "--new-session", "/bin/bash", "-c", command],
        stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10, env={"PATH": "/usr/bin:/bin"},
    )


WORDS = st.sampled_from([">", ">>", "2>", "&>", "2>&1", ">&", "|", "tee", "x", "/dev/null", "'>'", "<", "<>", ";",
                         "&&", "true", "-q", "a.pth", "1>", ">|", "\n", " "])


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap to confine the shell")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(WORDS, max_size=6))
def test_a_covered_command_writes_no_file(tail: list[str]) -> None:
    command = "true " + " ".join(tail)
    if not parse_rule("run_shell(true:*)").matches("run_shell", command, network=False):
        return
    with tempfile.TemporaryDirectory() as folder:
        done = run_confined(command, Path(folder))
        assert list(Path(folder).iterdir()) == [], f"{command!r} was covered and wrote a file"
        assert "Read-only file system" not in done.stderr, f"{command!r} was covered and tried to write: {done.stderr}"
