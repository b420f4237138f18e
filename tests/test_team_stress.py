"""CLI commands beside an open runtime (what the TUI holds: catalog, watcher, drift watch) and the project's own test
suite running in a loop, while tools and their dependencies are edited: every command ends within its bound, hand
edits are committed by the open runtime once they settle (never as "changed while tuiagent was not running"), and
nothing is lost. `TUIAGENT_STRESS_RUNS=300` runs it hundreds of times."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.catalog_support import tool_source
from tests.cli_in_process import run_in_process
from tests.gitrepo import git
from tests.open_runtime_process import cli_env, open_tuiagent

BOUND_S = 60.0
RUNS = int(os.environ.get("TUIAGENT_STRESS_RUNS", "8"))  # each command twice, three hand edits

PROJECT_SUITE = textwrap.dedent("""
    import hashlib
    from pathlib import Path


    def test_writes_a_data_file_as_a_fixture_would():
        Path("data/suite.txt").write_text("run\\n")


    def test_some_cpu():
        digest = b""
        for _ in range(20000):
            digest = hashlib.sha256(digest).digest()
        assert len(digest) == 32
""")

SUITE_LOOP = "while :; do python -m pytest -q -p no:randomly -p no:xdist -p no:cacheprovider tests >/dev/null 2>&1; done"


def edited_tool(run: int) -> str:
    return tool_source("double", f"return 2 * x + {run} - {run}", test="assert double(1) == 2",
                       extra='DEPENDS_ON = ["data/*.txt"]\n')


@pytest.mark.timeout(120 + RUNS * 2 * int(BOUND_S))
def test_cli_commands_beside_an_open_runtime_and_a_running_suite_never_exceed_their_bound(repo: Path) -> None:
    tools_dir = repo / ".agent" / "tools"
    tools_dir.mkdir(parents=True)
    (tools_dir / "double.py").write_text(edited_tool(-1))
    (repo / "data").mkdir()
    (repo / "data" / "a.txt").write_text("1\n")
    (repo / "tests").mkdir()
    (repo / "tests" / "test_project.py").write_text(PROJECT_SUITE)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "a tool and the project's suite")
    env = cli_env()
    suite = subprocess.Popen(["sh", "-c", SUITE_LOOP], cwd=repo, env={**env, "PATH": f"{Path(sys.executable).parent}:{env['PATH']}"},
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    slowest, last = 0.0, -1
    try:
        with open_tuiagent(repo) as holder:
            commands = [("list", "--json"), ("show", "double", "--json"), ("drift", "--json"), ("history", "double")]
            for run in range(RUNS):
                if run % 3 == 0:  # a person saving the tool, and a dependency changing, while commands run
                    (tools_dir / "double.py").write_text(edited_tool(run))
                    (repo / "data" / f"{run}.txt").write_text(f"{run}\n")
                    last = run
                argv = commands[run % len(commands)]
                started = time.monotonic()
                done = run_in_process("--project", str(repo), "tools", *argv)  # another process than the holder's
                slowest = max(slowest, time.monotonic() - started)
                assert slowest < BOUND_S, f"run {run}: `tuiagent tools {' '.join(argv)}` took {slowest:.0f} s"
                assert done.returncode == 0, (run, argv, done.stderr)
            assert suite.poll() is None, "the project's suite loop stopped"
            deadline = time.monotonic() + 30  # the last hand edit settles in the open runtime and is committed by it
            while git(repo, "show", "HEAD:.agent/tools/double.py") != edited_tool(last) and time.monotonic() < deadline:
                time.sleep(0.2)
            assert holder.poll() is None, "the open runtime died"
    finally:
        os.killpg(suite.pid, signal.SIGTERM)
        suite.wait(timeout=30)
    assert slowest < BOUND_S
    assert git(repo, "show", "HEAD:.agent/tools/double.py") == edited_tool(last)  # nothing lost
    subjects = git(repo, "log", "--format=%s").splitlines()
    assert not [subject for subject in subjects if "not running" in subject], subjects
    assert "tuiagent: update tool double (edited outside tuiagent)" in subjects
