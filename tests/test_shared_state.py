"""Shared state has one writer at a time: concurrent `tuiagent trust`/`untrust` processes (real processes started
together) all keep their change in trust.json, and the other shared files are replaced whole under their lock."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gitrepo import init_repo
from tui_agent.core import sharedfile
from tui_agent.core.project import Project
from tui_agent.core.trust import grant

ROOT = Path(__file__).resolve().parent.parent


def start(project: Path, *argv: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-m", "tui_agent.cli", "--project", str(project), *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def finish(processes: list[subprocess.Popen[str]]) -> None:
    for process in processes:
        out, err = process.communicate(timeout=120)
        assert process.returncode == 0, out + err


def recorded(config: Path) -> dict[str, object]:
    folders = json.loads((config / "tuiagent" / "trust.json").read_text())["folders"]
    assert isinstance(folders, dict)
    return folders


def test_twelve_concurrent_trusts_all_stick(tmp_path: Path, untrusted_config: Path) -> None:
    projects = [init_repo(tmp_path / f"p{index:02d}") for index in range(12)]
    finish([start(project, "trust") for project in projects])
    folders = recorded(untrusted_config)
    missing = [project.name for project in projects if os.path.realpath(project) not in folders]
    assert missing == []


def test_concurrent_trust_and_untrust_keep_each_decision(tmp_path: Path, untrusted_config: Path) -> None:
    kept = [init_repo(tmp_path / f"keep{index}") for index in range(5)]
    dropped = [init_repo(tmp_path / f"drop{index}") for index in range(5)]
    for project in dropped:
        grant(Project.at(project))
    finish([start(project, "trust") for project in kept] + [start(project, "untrust") for project in dropped])
    folders = recorded(untrusted_config)
    assert sorted(Path(key).name for key in folders) == sorted(project.name for project in kept)


def test_update_json_writes_whole_files_under_the_lock(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    assert sharedfile.update_json(target, lambda value: ({"n": 1}, value)) is None
    assert sharedfile.update_json(target, lambda value: ({"n": value["n"] + 1}, "two")) == "two"
    assert json.loads(target.read_text()) == {"n": 2}
    assert sorted(path.name for path in tmp_path.iterdir()) == ["state.json", "state.json.lock"]


def test_a_held_lock_is_reported_not_waited_for_ever(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time; from filelock import FileLock; lock = FileLock(sys.argv[1]); lock.acquire(); "
        "print('held', flush=True); time.sleep(30)"), str(target) + ".lock"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(sharedfile.SharedFileBusy, match="state.json"):
            with sharedfile.locked(target, timeout_s=0.3):
                pass
    finally:
        holder.kill()
        holder.wait()


def test_concurrent_allow_rules_saved_by_eight_processes_all_stay(repo: Path) -> None:
    code = ("import sys; from tui_agent.core.project import Project; "
            "from tui_agent.core.agent.allow_config import save_rule; "
            "save_rule(Project.at(sys.argv[1]), f'run_shell(make t{sys.argv[2]})')")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    finish([subprocess.Popen([sys.executable, "-c", code, str(repo), str(index)], env=env, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE) for index in range(8)])
    saved = (repo / ".agent" / "config.local.toml").read_text()
    assert sorted(rule for rule in (f"run_shell(make t{index})" for index in range(8)) if rule not in saved) == []


def test_opening_and_closing_projects_never_undoes_a_concurrent_untrust(tmp_path: Path, untrusted_config: Path) -> None:
    """A TUI or `-p` records the tools it saw at open and close (swap_seen_tools): six such writers racing six
    `untrust` runs leave every untrusted project untrusted."""
    opened = [init_repo(tmp_path / f"open{index}") for index in range(6)]
    dropped = [init_repo(tmp_path / f"drop{index}") for index in range(6)]
    for project in opened + dropped:
        grant(Project.at(project))
    code = ("import sys; from tui_agent.core.project import Project; "
            "from tui_agent.core.trust.check import tools_changed_since_last_seen as seen; "
            "[seen(Project.at(sys.argv[1])) for _ in range(5)]")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for project in opened:
        (project / ".agent" / "tools").mkdir(parents=True)
        (project / ".agent" / "tools" / "t.py").write_text("x = 1\n")  # a new tool: each open rewrites its entry
    finish([subprocess.Popen([sys.executable, "-c", code, str(project)], env=env, text=True, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE) for project in opened]
           + [start(project, "untrust") for project in dropped])
    folders = recorded(untrusted_config)
    assert sorted(Path(key).name for key in folders) == sorted(project.name for project in opened)
