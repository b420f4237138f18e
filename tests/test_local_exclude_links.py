"""`.git/info/exclude` is written with no link followed and nothing but a regular file touched: a downloaded `.git`
whose `info/exclude` or `info` links to ~/.bashrc, or whose `info/exclude` is a fifo, is left alone, never waited on."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gitrepo import init_repo
from tui_agent.core.versioning.localexclude import HEADER, ensure_excluded


@pytest.mark.parametrize("linked", ["info/exclude", "info"])
def test_a_linked_exclude_is_not_written_through(tmp_path: Path, linked: str) -> None:
    repo = init_repo(tmp_path / "p")
    bashrc = tmp_path / "home" / ".bashrc"
    bashrc.parent.mkdir()
    bashrc.write_text("alias ll='ls -l'\n")
    info = repo / ".git" / "info"
    for inner in info.iterdir() if info.is_dir() else ():
        inner.unlink()
    info.rmdir()
    if linked == "info":
        info.symlink_to(bashrc.parent)
        (bashrc.parent / "exclude").symlink_to(bashrc)
    else:
        info.mkdir()
        (info / "exclude").symlink_to(bashrc)
    assert ensure_excluded(repo) is False
    assert bashrc.read_text() == "alias ll='ls -l'\n"


def test_a_fifo_at_info_exclude_is_not_waited_on(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "p")
    exclude = repo / ".git" / "info" / "exclude"
    exclude.unlink(missing_ok=True)
    os.mkfifo(exclude)
    code = "import sys; from pathlib import Path; from tui_agent.core.versioning.localexclude import ensure_excluded as e; print(e(Path(sys.argv[1])))"
    done = subprocess.run([sys.executable, "-c", code, str(repo)], capture_output=True, text=True, timeout=20)
    assert done.stdout.strip() == "False", done.stderr


def test_rules_are_added_once_and_a_read_only_exclude_with_them_counts(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "p")
    assert ensure_excluded(repo) and ensure_excluded(repo)
    exclude = repo / ".git" / "info" / "exclude"
    assert exclude.read_text().count(HEADER) == 1 and "/.agent/state.db\n" in exclude.read_text()
    exclude.chmod(0o444)
    if os.geteuid() != 0:
        assert ensure_excluded(repo)
