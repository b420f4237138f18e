"""Finding the project's toolchain: which virtualenv, which PATH, which folders and variables (no sandbox needed)."""

from __future__ import annotations

import base64
import hashlib
import os
from pathlib import Path

from tui_agent.core.sandbox.toolchain import discover


def make_venv(path: Path, home: str = "/usr/bin") -> Path:
    (path / "bin").mkdir(parents=True)
    (path / "pyvenv.cfg").write_text(f"home = {home}\n")
    return path


def environ(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), "PATH": "/usr/bin:/bin", **extra}


def test_the_project_venv_comes_before_an_active_one(tmp_path: Path) -> None:
    project, home = tmp_path / "proj", tmp_path / "home"
    home.mkdir()
    active = make_venv(tmp_path / "tuiagent-venv")
    assert discover(project_root(project), environ=environ(home, VIRTUAL_ENV=str(active))).venv == active
    make_venv(project / "venv")
    assert discover(project, environ=environ(home, VIRTUAL_ENV=str(active))).venv == project / "venv"
    make_venv(project / ".venv")
    chain = discover(project, environ=environ(home, VIRTUAL_ENV=str(active)))
    assert chain.venv == project / ".venv" and chain.path[0] == str(project / ".venv" / "bin")
    assert chain.env["VIRTUAL_ENV"] == str(project / ".venv")


def project_root(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_uv_and_poetry_environments_are_found(tmp_path: Path) -> None:
    project, home = project_root(tmp_path / "proj"), tmp_path / "home"
    (project / "pyproject.toml").write_text('[tool.poetry]\nname = "My App"\n')
    digest = base64.urlsafe_b64encode(hashlib.sha256(os.path.normcase(os.path.realpath(project)).encode()).digest()).decode()[:8]
    poetry_env = make_venv(home / ".cache" / "pypoetry" / "virtualenvs" / f"my_app-{digest}-py3.12", home=str(home / ".pyenv" / "versions" / "3.12.1" / "bin"))
    (home / ".pyenv" / "versions" / "3.12.1" / "bin").mkdir(parents=True)
    (home / ".pyenv" / "versions" / "3.12.1" / "lib" / "python3.12").mkdir(parents=True)  # a real installation
    python = home / ".pyenv" / "versions" / "3.12.1" / "bin" / "python3"
    python.write_text("#!/bin/sh\n")
    python.chmod(0o755)
    chain = discover(project, environ=environ(home))
    assert chain.venv == poetry_env
    assert poetry_env in chain.read_only and home / ".pyenv" / "versions" / "3.12.1" in chain.read_only
    uv_env = make_venv(project / "envs" / "uv")
    assert discover(project, environ=environ(home, UV_PROJECT_ENVIRONMENT="envs/uv")).venv == uv_env


def test_path_entries_and_folders(tmp_path: Path) -> None:
    project, home = project_root(tmp_path / "proj"), tmp_path / "home"
    for folder in (".cargo/bin", ".local/bin", ".local/share/keyrings", ".local/share/Trash", "bin", ".ssh"):
        (home / folder).mkdir(parents=True)
    env = environ(home, PATH=f"{home}/bin:relative/bin:{home}/.ssh:/no/such/dir:/usr/bin", CC="clang", GITHUB_TOKEN="x")
    chain = discover(project, environ=env, extra_env=["MY_FLAG", "AWS_SECRET", "bad name"], extra_paths=["~/.ssh", "relative"])
    assert chain.path[0] == f"{home}/bin" and "relative/bin" not in chain.path and f"{home}/.ssh" not in chain.path
    assert home / ".cargo" in chain.read_only and home / ".local" / "bin" in chain.read_only
    assert not any(folder in chain.read_only for folder in (home, home / ".local", home / ".ssh", home / ".local" / "share"))
    assert chain.env["CC"] == "clang" and chain.env["CARGO_HOME"] == str(home / ".cargo")
    assert "GITHUB_TOKEN" not in chain.env and chain.withheld_secrets == ("GITHUB_TOKEN",)
    assert len(chain.problems) == 4  # AWS_SECRET, 'bad name', ~/.ssh, relative


def test_configured_paths_never_open_tmp_or_other_homes(tmp_path: Path) -> None:
    project, home = project_root(tmp_path / "proj"), tmp_path / "home"
    (home / "sdk").mkdir(parents=True)
    chain = discover(project, environ=environ(home), extra_paths=["/tmp", "/home", "/root", "/", "~/sdk", "/usr/share"])
    assert home / "sdk" in chain.read_only and Path("/usr/share") in chain.read_only
    assert not any(Path(p) in chain.read_only for p in ("/tmp", "/home", "/root", "/"))
    assert len(chain.problems) == 4
