"""run_shell sees the project's toolchain (its venv, PATH, toolchains under the home) but never a secret; network on request."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tui_agent.cli import main
from tui_agent.core.agent.exec_tools import run_python, run_shell
from tui_agent.core.agent.permissions import ApprovalRequest, Permissions
from tui_agent.core.agent.toolbase import ToolContext, ToolFailure
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox
from tui_agent.core.sandbox.launch import probe_bubblewrap
from tui_agent.core.sandbox.toolchain import SECRET_HOME_PATHS, TOOL_HOME_VARIABLES, TOOLCHAIN_SECRETS

pytestmark = pytest.mark.skipif(probe_bubblewrap() is not None, reason="needs a working bubblewrap")

TOOL_VENV_BIN = str(Path(sys.executable).parent)
SECRET_VARIABLES = {
    "ANTHROPIC_API_KEY": "sk-ant-secret-1", "GITHUB_TOKEN": "ghp-secret-2", "MY_SERVICE_KEY": "secret-3",
    "AWS_SECRET_ACCESS_KEY": "secret-4", "DB_PASSWORD": "secret-5", "NPM_AUTH_TOKEN": "secret-6",
}


class Recorder:
    """An approval callback that approves and remembers each request."""

    def __init__(self) -> None:
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> bool:
        self.requests.append(request)
        return True


async def shell(project: Path, command: str, tier: str = "bubblewrap", **extra: Any) -> tuple[str, Recorder]:
    recorder = Recorder()
    sandbox = await Sandbox.start(Project.at(project), tier=tier, warm_workers=0)
    try:
        ctx = ToolContext(Project.at(project), Permissions("ask", recorder), sandbox)
        output = await run_shell(ctx, {"command": command, **extra})
        return output.text, recorder
    finally:
        await sandbox.aclose()


async def python_snippet(project: Path, code: str) -> str:
    sandbox = await Sandbox.start(Project.at(project), tier="bubblewrap", warm_workers=0)
    try:
        return (await run_python(ToolContext(Project.at(project), Permissions("ask", Recorder()), sandbox), {"code": code})).text
    finally:
        await sandbox.aclose()


@pytest.fixture
def fake_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home" / "dev"
    home.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    # As when tuiagent runs from its own activated virtualenv: that python has no project packages.
    monkeypatch.setenv("PATH", f"{TOOL_VENV_BIN}:/usr/local/bin:/usr/bin:/bin")
    monkeypatch.setenv("VIRTUAL_ENV", str(Path(sys.executable).parent.parent))
    for name in TOOL_HOME_VARIABLES:  # this machine's own toolchain settings point into the real home
        monkeypatch.delenv(name, raising=False)
    return home


def make_project_with_venv(root: Path) -> Path:
    """A project whose tests import a package installed only in the project's own .venv (made offline)."""
    root.mkdir()
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / ".venv")], check=True)
    site = next((root / ".venv" / "lib").glob("python*/site-packages"))
    (site / "projlib.py").write_text("VALUE = 42\n")
    # pytest itself comes from tuiagent's environment, offline: a .pth line adds its site-packages after ours.
    import pytest as pytest_module

    (site / "zz_pytest_from_tuiagent.pth").write_text(str(Path(pytest_module.__file__).parent.parent) + "\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_app.py").write_text("import projlib\n\n\ndef test_value():\n    assert projlib.VALUE == 42\n")
    return root


async def test_the_project_tests_run_with_the_projects_own_venv(tmp_path: Path, fake_home: Path) -> None:
    project = make_project_with_venv(tmp_path / "proj")
    text, _ = await shell(project, "python -m pytest -q -p no:cacheprovider tests && python -c 'import sys; print(sys.prefix)' && echo $VIRTUAL_ENV")
    assert text.startswith("exit code: 0"), text
    assert "1 passed" in text
    assert text.count(str(project / ".venv")) == 2
    snippet = "import subprocess\nsubprocess.run(['python', '-c', 'import projlib; print(projlib.VALUE)'], capture_output=True, text=True).stdout"
    assert "42" in await python_snippet(project, snippet)  # run_python's subprocesses see the venv too
    # The same command with tuiagent's own python (the reported bug) cannot import the project's package.
    assert subprocess.run([sys.executable, "-c", "import projlib"], capture_output=True).returncode != 0


def write_script(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)


async def test_toolchains_under_the_home_are_visible_and_read_only(tmp_path: Path, fake_home: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    write_script(fake_home / ".cargo" / "bin" / "cargo-hello", 'echo "cargo home $CARGO_HOME"; cat "$RUSTUP_HOME/settings.toml"')
    (fake_home / ".rustup").mkdir()
    (fake_home / ".rustup" / "settings.toml").write_text("default_toolchain = 'stable'\n")
    write_script(fake_home / ".nvm" / "versions" / "node" / "v20.1.0" / "bin" / "nodeish", "echo node v20.1.0")
    write_script(fake_home / ".local" / "bin" / "localtool", "echo local tool")
    write_script(fake_home / ".pyenv" / "shims" / "pyenvtool", 'echo "pyenv root $PYENV_ROOT"')
    write_script(fake_home / "go" / "bin" / "gotool", 'echo "gopath $GOPATH"')
    write_script(fake_home / "bin" / "mine", "echo my own bin")
    (fake_home / "Documents").mkdir()
    (fake_home / "Documents" / "private.txt").write_text("not for the agent")
    path_entries = [".cargo/bin", ".nvm/versions/node/v20.1.0/bin", ".local/bin", ".pyenv/shims", "go/bin", "bin"]
    monkeypatch.setenv("PATH", ":".join(str(fake_home / entry) for entry in path_entries) + ":/usr/bin:/bin")
    project = tmp_path / "proj"
    project.mkdir()
    text, _ = await shell(project, "cargo-hello && nodeish && localtool && pyenvtool && gotool && mine && "
                                   f"(cat {fake_home}/Documents/private.txt; ls $CARGO_HOME/../Documents; touch $CARGO_HOME/bin/new) 2>&1")
    assert f"cargo home {fake_home / '.cargo'}" in text and "default_toolchain = 'stable'" in text
    assert "node v20.1.0" in text and "local tool" in text and "my own bin" in text
    assert f"pyenv root {fake_home / '.pyenv'}" in text and f"gopath {fake_home / 'go'}" in text
    assert "not for the agent" not in text and "Documents': No such file or directory" in text
    assert "Read-only file system" in text
    assert not (fake_home / ".cargo" / "bin" / "new").exists()


def plant_secrets(home: Path) -> list[Path]:
    planted: list[Path] = []
    in_toolchains = [f"{folder}/{name.replace('*', 'v20.1.0')}" for folder, names in TOOLCHAIN_SECRETS.items()
                     for name in names]
    for relative in (*SECRET_HOME_PATHS, *in_toolchains):
        path = home / relative
        if relative.rsplit("/", 1)[-1].startswith(".") or relative.endswith((".json", ".toml", "credentials")):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"SECRET-FILE {relative}\n")
        else:
            path.mkdir(parents=True, exist_ok=True)
            (path / "inner").write_text(f"SECRET-FILE {relative}\n")
        planted.append(path)
    return planted


READ_EVERYTHING = r"""python3 - {paths} <<'EOF'
import os, sys
found = []
for top in sys.argv[1:]:
    for base, dirs, files in os.walk(top) if os.path.isdir(top) else [(os.path.dirname(top), [], [os.path.basename(top)])]:
        for name in files:
            try:
                found.append(open(os.path.join(base, name), errors="replace").read())
            except OSError as error:
                found.append(f"unreadable {error.errno}")
print("READ:", found)
EOF
env
"""


async def test_no_secret_path_or_variable_is_readable_from_inside(tmp_path: Path, fake_home: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    planted = plant_secrets(fake_home)
    write_script(fake_home / ".cargo" / "bin" / "cargo", "echo cargo")
    for name, value in SECRET_VARIABLES.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("MY_BUILD_FLAG", "fast")
    monkeypatch.setenv("CC", "gcc-13")
    project = tmp_path / "proj"
    (project / ".agent").mkdir(parents=True)
    # The project asks for more: ~/.config (holding gh, gcloud and browser profiles) and a token variable.
    (project / ".agent" / "config.toml").write_text(
        '[sandbox]\nenv = ["MY_BUILD_FLAG", "GITHUB_TOKEN"]\npaths = ["~/.config", "~/.ssh", "~"]\n')
    text, _ = await shell(project, READ_EVERYTHING.replace("{paths}", " ".join(str(path) for path in planted)))
    assert "READ:" in text, text
    assert "SECRET-FILE" not in text
    for name, value in SECRET_VARIABLES.items():
        assert name not in text and value not in text
    assert "MY_BUILD_FLAG=fast" in text and "CC=gcc-13" in text
    ls_text, _ = await shell(project, f"ls {fake_home}/.config; ls {fake_home}/.config/gh | wc -l")
    assert "gh" in ls_text  # ~/.config is visible as configured, its secrets are masked (empty)
    assert ls_text.rstrip().endswith("0")


async def test_registry_tokens_where_a_toolchain_variable_puts_its_folder_are_masked(
        tmp_path: Path, fake_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """CARGO_HOME and NVM_DIR outside the home: the folder is bound whole, its token files are masked all the same
    (and cargo's own files beside them stay readable)."""
    cargo, nvm = tmp_path / "tools" / "cargo", tmp_path / "tools" / "nvm"
    for secret in (cargo / "credentials.toml", cargo / "config.toml", nvm / "versions/node/v22.1.0/etc/npmrc"):
        secret.parent.mkdir(parents=True, exist_ok=True)
        secret.write_text("token = TOOL-FOLDER-SECRET\n")
    write_script(cargo / "bin" / "cargo", "echo cargo here")
    monkeypatch.setenv("CARGO_HOME", str(cargo))
    monkeypatch.setenv("NVM_DIR", str(nvm))
    monkeypatch.setenv("PATH", f"{cargo / 'bin'}:/usr/bin:/bin")
    project = tmp_path / "proj"
    project.mkdir()
    text, _ = await shell(project, f"cargo; cat {cargo}/credentials.toml {cargo}/config.toml "
                                   f"{nvm}/versions/node/v22.1.0/etc/npmrc; ls {cargo}")
    assert "cargo here" in text and "bin" in text, text
    assert "TOOL-FOLDER-SECRET" not in text, text


async def test_secret_variables_stay_out_under_the_fallback_tier_too(tmp_path: Path, fake_home: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in SECRET_VARIABLES.items():
        monkeypatch.setenv(name, value)
    project = tmp_path / "proj"
    project.mkdir()
    text, _ = await shell(project, "env", tier="rlimits")
    assert "PATH=" in text and not any(name in text or value in text for name, value in SECRET_VARIABLES.items())


def test_sandbox_status_shows_what_is_visible_and_hidden(tmp_path: Path, fake_home: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    plant_secrets(fake_home)
    project = make_project_with_venv(tmp_path / "proj")
    (project / ".agent").mkdir()
    (project / ".agent" / "config.toml").write_text('[sandbox]\nenv = ["GITHUB_TOKEN"]\npaths = ["~/.ssh"]\n')
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    assert main(["--project", str(project), "sandbox", "status", "--json"]) == 0
    info = json.loads(capsys.readouterr().out)["toolchain"]
    assert info["visible"]["virtualenv"] == str(project / ".venv")
    assert info["visible"]["PATH"][0] == str(project / ".venv" / "bin")
    assert str(fake_home / ".ssh") in info["hidden"]["secret_paths"]
    assert "GITHUB_TOKEN" in info["hidden"]["secret_variables"]
    assert any("GITHUB_TOKEN" in problem for problem in info["problems"])
    assert any("~/.ssh" in problem for problem in info["problems"])
    assert main(["--project", str(project), "sandbox", "status"]) == 0
    out = capsys.readouterr().out
    assert "visible" in out and "hidden" in out and str(fake_home / ".ssh") in out and "READABLE" not in out
    assert main(["--project", str(project), "sandbox", "status", "--tier", "rlimits"]) == 0
    assert "secret paths (READABLE on this tier" in capsys.readouterr().out


@pytest.fixture
def listener() -> Iterator[tuple[int, list[bytes]]]:
    server = socket.create_server(("127.0.0.1", 0))
    received: list[bytes] = []

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            received.append(connection.recv(100))
            connection.close()

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1], received
    server.close()


async def test_network_is_off_unless_the_call_asks_and_the_approval_says_so(tmp_path: Path, listener: tuple[int, list[bytes]]) -> None:
    port, received = listener
    project = tmp_path / "proj"
    project.mkdir()
    connect = f"python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port})).sendall(b'hi')\""
    text, recorder = await shell(project, connect)
    assert not text.startswith("exit code: 0") and received == []
    assert recorder.requests[0].kind == "shell" and "no network" in recorder.requests[0].summary
    # Issue 33: a grant is a way out through the host's proxy, never to the host's own loopback.
    ask_proxy = ("python3 -c \"import os, urllib.request; print(os.environ['HTTPS_PROXY']); "
                 f"urllib.request.urlopen('http://sandbox-test.invalid:{port}/')\"")
    text, recorder = await shell(project, f"{connect}; {ask_proxy}", network=True)
    assert "http://127.0.0.1:3128" in text and "403" in text, text
    assert recorder.requests[0].kind == "network"
    assert "WITH NETWORK ACCESS (any public host name)" in recorder.requests[0].summary
    await __import__("asyncio").sleep(0.3)
    assert received == []
    with pytest.raises(ToolFailure):
        await shell(project, "true", network="yes")


async def test_the_configured_names_limit_a_shell_grant_and_the_approval_names_them(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".agent").mkdir(parents=True)
    (project / ".agent" / "config.toml").write_text('[sandbox]\nnetwork = ["pypi.org", "*.pythonhosted.org"]\n')
    fetch = "python3 -c \"import urllib.request; urllib.request.urlopen('http://files.example.org/')\""
    text, recorder = await shell(project, fetch, network=True)
    assert "WITH NETWORK ACCESS (only pypi.org, *.pythonhosted.org)" in recorder.requests[0].summary
    assert "files.example.org is not in the network grant (only pypi.org, *.pythonhosted.org)" in text, text


async def test_a_snippet_gets_the_network_only_when_it_asks_under_the_configured_names(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".agent").mkdir(parents=True)
    (project / ".agent" / "config.toml").write_text('[sandbox]\nnetwork = ["pypi.org"]\n')
    code = ("import urllib.request, urllib.error\ntry:\n    urllib.request.urlopen('http://files.example.org/')\n"
            "except urllib.error.HTTPError as error:\n    answer = error.read().decode().strip()\nanswer")
    recorder = Recorder()
    sandbox = await Sandbox.start(Project.at(project), tier="bubblewrap", warm_workers=0)
    try:
        ctx = ToolContext(Project.at(project), Permissions("ask", recorder), sandbox)
        offline = await run_python(ctx, {"code": code})
        granted = await run_python(ctx, {"code": code, "network": True})
        with pytest.raises(ToolFailure):
            await run_python(ctx, {"code": "1", "network": "yes"})
    finally:
        await sandbox.aclose()
    assert offline.is_error and recorder.requests[0].kind == "network"  # the first request is the granted call's
    assert recorder.requests[0].summary == "run a Python snippet WITH NETWORK ACCESS (only pypi.org)"
    assert "files.example.org is not in the network grant (only pypi.org)" in granted.text, granted.text


@pytest.mark.skipif(sys.prefix == sys.base_prefix, reason="tuiagent must run from a virtualenv of its own")
async def test_tuiagents_own_activated_venv_is_never_taken_for_the_projects(tmp_path: Path, fake_home: Path) -> None:
    project = tmp_path / "proj"  # no virtualenv of its own; tuiagent's is activated (fake_home's VIRTUAL_ENV, PATH)
    project.mkdir()
    text, recorder = await shell(project, "python3 -c 'import sys; print(sys.prefix)'; echo venv=$VIRTUAL_ENV")
    assert text.startswith("exit code: 0"), text
    assert sys.prefix not in text and "venv=\n" in text
    assert not [note for request in recorder.requests for note in request.notes if "virtualenv" in note]
