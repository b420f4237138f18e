"""A killed tuiagent leaves no temporary folder behind after the next start: real processes SIGKILLed mid-run, the
next start sweeps their folders (read-only and mode-000 ones included) and keeps a live process's, other users'
and whatever a link points to."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.open_runtime_process import cli_env
from tui_agent.core.project import Project
from tui_agent.core.tempfolders import AWAITING_RECOVERY, owned_temp, sweep

SLOW = "import time\nopen('started', 'w').write('yes')\ntime.sleep(60)\n"


def owned_by(temp: Path, pid: int) -> list[str]:
    return sorted(entry.name for entry in temp.iterdir() if f"-{pid}-" in entry.name)


def start_slow_run(repo: Path, temp: Path, script: Path) -> subprocess.Popen[bytes]:
    """`tuiagent sandbox run` of a script that sleeps, returned once the script runs (its write seen in the project
    or in its overlay's upper folder)."""
    env = {**cli_env(), "TMPDIR": str(temp)}
    running = subprocess.Popen([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "sandbox", "run",
                                str(script)], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not ((repo / "started").exists() or any(temp.glob(f"tuiagent-sandbox-{running.pid}-*/overlay-*/upper/started"))):
        assert time.monotonic() < deadline and running.poll() is None, "the run did not start"
        time.sleep(0.05)
    return running


def test_folders_of_a_run_killed_mid_run_are_swept_at_the_next_start_and_a_live_ones_stay(
        repo: Path, tmp_path: Path) -> None:
    Project.at(repo).ensure_layout()
    temp = tmp_path / "tmp"
    temp.mkdir()
    slow = tmp_path / "slow.py"
    slow.write_text(SLOW)
    killed = start_slow_run(repo, temp, slow)
    killed.send_signal(signal.SIGKILL)  # no finally block, no atexit: only the next start can clean up
    killed.wait()
    assert any(name.startswith(f"tuiagent-sandbox-{killed.pid}-") for name in owned_by(temp, killed.pid))
    (repo / "started").unlink(missing_ok=True)
    live = start_slow_run(repo, temp, slow)
    try:
        live_folders = owned_by(temp, live.pid)
        noop = tmp_path / "noop.py"
        noop.write_text("pass\n")
        done = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "sandbox", "run",
                               str(noop)], env={**cli_env(), "TMPDIR": str(temp)}, capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert owned_by(temp, killed.pid) == []
        assert live_folders and set(live_folders) <= set(owned_by(temp, live.pid))
    finally:
        live.terminate()
        live.wait(timeout=30)


def dead_pid() -> int:
    gone = subprocess.Popen(["true"])
    gone.wait()
    return gone.pid


def test_the_sweep_opens_locked_folders_and_never_follows_links(tmp_path: Path) -> None:
    temp = tmp_path / "tmp"
    temp.mkdir()
    outside = tmp_path / "outside"
    (outside / "keep").mkdir(parents=True)
    (outside / "keep/file").write_text("precious")
    pid = dead_pid()
    left = temp / f"tuiagent-sandbox-{pid}-abc"
    (left / "overlay-x/work/work/inner").mkdir(parents=True)
    (left / "overlay-x/upper").mkdir()
    (left / "overlay-x/upper/f").write_text("x")
    (left / "overlay-x/upper/link").symlink_to(outside / "keep")
    os.chmod(left / "overlay-x/work/work/inner", 0o000)
    os.chmod(left / "overlay-x/work/work", 0o000)  # what the kernel leaves in an overlay's work folder
    os.chmod(left / "overlay-x/upper", 0o500)
    (temp / f"tuiagent-checkpoint-{pid}-link").symlink_to(outside)
    mine = owned_temp("sandbox", temp)
    unrelated = temp / f"tuiagent-sandbox-{os.getppid()}-live"
    unrelated.mkdir()
    legacy = temp / "tuiagent-sandbox-q8x1_abc"
    legacy.mkdir()
    assert sweep(temp) == [left.name]
    assert not left.exists()
    assert (outside / "keep/file").read_text() == "precious"
    assert (temp / f"tuiagent-checkpoint-{pid}-link").is_symlink()
    assert mine.is_dir() and unrelated.is_dir() and legacy.is_dir()


def test_another_processes_sweep_keeps_a_killed_runs_overlay_until_its_project_recovers_it(tmp_path: Path) -> None:
    """A run killed with its tuiagent leaves its writes in an overlay that its project's next start applies: a sweep
    by any other tuiagent process (another project, a test worker) before that must not delete them."""
    temp = tmp_path / "tmp"
    temp.mkdir()
    pid = dead_pid()
    waiting = temp / f"tuiagent-sandbox-{pid}-abc"
    (waiting / "overlay-x/upper").mkdir(parents=True)
    (waiting / "overlay-x/upper/notes.txt").write_text("the run's work")
    (waiting / "overlay-x" / AWAITING_RECOVERY).write_text("/project/.agent/cache/overlays/1-overlay-x.json")
    applied = temp / f"tuiagent-sandbox-{pid}-def"
    (applied / "overlay-y/upper").mkdir(parents=True)  # no marker: recovered (or never recorded)
    assert sweep(temp) == [applied.name]
    assert (waiting / "overlay-x/upper/notes.txt").read_text() == "the run's work"
    shutil.rmtree(waiting / "overlay-x")  # what the project's recovery does once it applied the writes
    assert sweep(temp) == [waiting.name]
