"""The launch path's command line: what is computed once with the toolchain is made anew when it would hide other
host folders today (no worker is started; the hidden folders themselves are tested in test_sandbox_host_reach.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tui_agent.core.sandbox.launch import JOIN_THEN_EXEC, Launch, bwrap_path, command
from tui_agent.core.sandbox.toolchain import discover
from tui_agent.core.sandbox.writable_runs import MOUNT_FAILED

pytestmark = pytest.mark.skipif(bwrap_path() is None or not Path("/dev/shm").is_dir(),
                                reason="needs bubblewrap and /dev/shm (a folder the sandbox does not hide already)")


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside every folder the sandbox hides (homes, /tmp, /run, /var/tmp)."""
    folder = Path(tempfile.mkdtemp(prefix="tuiagent-launch-", dir="/dev/shm"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def tmpfs_of(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, argument in enumerate(argv) if argument == "--tmpfs"]


def test_a_changed_runtime_dir_is_hidden_at_the_next_launch(tmp_path: Path, outside: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    toolchain = discover(project)
    launch = Launch(tier="bubblewrap")
    before = command(project, launch, token="a", scratch=tmp_path, channel_fd=3, toolchain=toolchain).argv
    assert str(outside) not in before
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(outside))
    after = command(project, launch, token="b", scratch=tmp_path, channel_fd=3, toolchain=toolchain).argv
    assert str(outside) in tmpfs_of(after)


def test_a_runtime_dir_made_after_discovery_is_hidden_at_the_next_launch(tmp_path: Path, outside: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "project"
    project.mkdir()
    runtime_dir = outside / "runtime"
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime_dir))
    toolchain = discover(project)
    launch = Launch(tier="bubblewrap")
    before = command(project, launch, token="a", scratch=tmp_path, channel_fd=3, toolchain=toolchain).argv
    assert str(runtime_dir) not in before
    runtime_dir.mkdir()
    after = command(project, launch, token="b", scratch=tmp_path, channel_fd=3, toolchain=toolchain).argv
    assert str(runtime_dir) in tmpfs_of(after)
    assert after.count(f"private={runtime_dir}") == 1  # a batch empties it between its calls too


def test_a_cgroup_that_cannot_be_joined_is_not_taken_for_a_failed_overlay_mount(tmp_path: Path) -> None:
    """Both steps run before the sandbox's interpreter: only the mount's failure may turn overlays off."""
    done = subprocess.run(["/bin/sh", "-c", JOIN_THEN_EXEC, "sh", str(tmp_path / "gone" / "cgroup.procs"), "--", "true"],
                          capture_output=True, check=False)
    assert done.returncode not in (0, MOUNT_FAILED), done


def test_a_secret_in_a_toolchain_folder_the_sandbox_does_not_hide_is_masked(tmp_path: Path, outside: Path) -> None:
    """A toolchain folder outside the hidden ones (CARGO_HOME=/usr/local/cargo, as in Docker's rust image) is seen
    through the read-only root: its registry token is masked there as in a folder bound into a hidden one."""
    cargo = outside / "cargo"
    (cargo / "bin").mkdir(parents=True)
    (cargo / "credentials.toml").write_text("[registry]\ntoken = 'secret'\n")
    project = tmp_path / "project"
    project.mkdir()
    toolchain = discover(project, environ={**os.environ, "CARGO_HOME": str(cargo)})
    argv = command(project, Launch(tier="bubblewrap"), token="a", scratch=tmp_path, channel_fd=3, toolchain=toolchain).argv
    masked = [argv[i + 2] for i, argument in enumerate(argv) if argv[i:i + 2] == ["--ro-bind", "/dev/null"]]
    assert str(cargo / "credentials.toml") in masked, argv
