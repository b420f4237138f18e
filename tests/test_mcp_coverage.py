"""An MCP server's approval covers every project file it can load: a helper its script imports, its `-m` package,
a package appearing later where `-m` would find it. A change to any of them keeps the server from starting (its
code never runs: canary files stay unwritten) and is shown with its diff; an unchanged folder starts as before."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.hostile.repo import hostile_repo
from tui_agent.cli import main
from tui_agent.core.mcp import coverage
from tui_agent.core.trust import trust_folder

pytestmark = pytest.mark.usefixtures("untrusted_config")

SERVER = "import helpers\nopen({marker!r}, 'a').write('started\\n')\n"
HELPER = "VALUE = 1\n"
EVIL = "open({canary!r}, 'w').write('the rewritten helper ran on the host')\nVALUE = 1\n"


def tuiagent(repo: Path, *args: str) -> int:
    return main(["--project", str(repo), *args])


def server_error(repo: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """Start the configured servers as a session does (`mcp list`) and return the first one's error."""
    capsys.readouterr()
    tuiagent(repo, "mcp", "list", "--json")
    return json.loads(capsys.readouterr().out)["servers"][0]["error"] or ""


def approve(repo: Path, workspace: str, tmp_path: Path) -> None:
    if workspace == "project":  # trusted by content: the workspace's pin of the grant sees the change first
        assert tuiagent(repo, "trust") == 0
    else:  # a trusted folder pins no content: the MCP approval's own pin must see it
        trust_folder(str(tmp_path))
    assert tuiagent(repo, "mcp", "trust", "--all") == 0


def script_repo(tmp_path: Path) -> tuple[Path, Path]:
    marker = tmp_path / "server-started"
    repo = hostile_repo(tmp_path / "p", {
        ".mcp.json": json.dumps({"mcpServers": {"ping": {"command": sys.executable, "args": ["srv/server.py"]}}}),
        "srv/server.py": SERVER.format(marker=str(marker)),
        "srv/helpers.py": HELPER,
        "README.md": "not loaded by the server\n",
    })
    return repo, marker


@pytest.mark.parametrize("workspace", ["project", "folder"])
def test_a_rewritten_helper_the_pinned_script_imports_keeps_the_server_from_starting(
        tmp_path: Path, workspace: str, capsys: pytest.CaptureFixture[str]) -> None:
    repo, marker = script_repo(tmp_path)
    canary = tmp_path / "canary"
    approve(repo, workspace, tmp_path)
    (repo / "srv" / "helpers.py").write_text(EVIL.format(canary=str(canary)))  # a run rewrites the helper
    error = server_error(repo, capsys)
    assert not canary.exists() and not marker.exists()
    expected = "changed: MCP server ping" if workspace == "project" else "srv/helpers.py changed since its command was approved"
    assert expected in error and "--- srv/helpers.py (approved)" in error and "+open(" in error
    tuiagent(repo, "trust", "--show")
    assert "srv/helpers.py changed since `tuiagent mcp trust`" in capsys.readouterr().out


@pytest.mark.parametrize("workspace", ["project", "folder"])
def test_an_unchanged_folder_starts_without_asking_again_and_again(
        tmp_path: Path, workspace: str, capsys: pytest.CaptureFixture[str]) -> None:
    repo, marker = script_repo(tmp_path)
    approve(repo, workspace, tmp_path)
    server_error(repo, capsys)
    assert not (repo / "srv" / "__pycache__").exists()  # its bytecode is kept outside the project
    (repo / "README.md").write_text("edited: outside the server's folder\n")
    server_error(repo, capsys)
    assert marker.read_text() == "started\nstarted\n"


def test_a_file_added_to_the_folder_asks_again_with_its_content(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    repo, marker = script_repo(tmp_path)
    approve(repo, "folder", tmp_path)
    (repo / "srv" / "sitecustomize.py").write_text("import os  # new\n")
    error = server_error(repo, capsys)
    assert not marker.exists()
    assert "srv/sitecustomize.py changed since its command was approved" in error and "+import os  # new" in error


def module_repo(tmp_path: Path, marker: Path) -> Path:
    return hostile_repo(tmp_path / "p", {
        ".mcp.json": json.dumps({"mcpServers": {"ping": {"command": sys.executable, "args": ["-m", "pkg.serve"]}}}),
        "pkg/__init__.py": "",
        "pkg/serve.py": f"from pkg import helpers\nopen({str(marker)!r}, 'a').write('started\\n')\n",
        "pkg/helpers.py": HELPER,
    })


def test_a_python_m_server_is_pinned_by_its_package(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marker, canary = tmp_path / "server-started", tmp_path / "canary"
    repo = module_repo(tmp_path, marker)
    approve(repo, "folder", tmp_path)
    capsys.readouterr()
    assert tuiagent(repo, "mcp", "trust", "ping") == 0
    assert "covers pkg/, modules importable from the project root (./) (4 files" in capsys.readouterr().out  # + app.py
    server_error(repo, capsys)
    assert marker.read_text() == "started\n"  # unchanged: it starts
    (repo / "pkg" / "helpers.py").write_text(EVIL.format(canary=str(canary)))
    error = server_error(repo, capsys)
    assert not canary.exists() and marker.read_text() == "started\n"
    assert "pkg/helpers.py changed since its command was approved" in error and "+open(" in error


def test_a_package_planted_where_python_m_would_find_it_asks_again(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m tool_not_in_project` pins nothing of the project, until the project holds a `tool_not_in_project`
    (the working directory comes first on the import path: it would run instead of the installed one)."""
    canary = tmp_path / "canary"
    repo = hostile_repo(tmp_path / "p", {
        ".mcp.json": json.dumps({"mcpServers": {"ping": {"command": sys.executable, "args": ["-m", "shadowed_srv"]}}}),
    })
    approve(repo, "folder", tmp_path)
    (repo / "shadowed_srv").mkdir()
    (repo / "shadowed_srv" / "__main__.py").write_text(EVIL.format(canary=str(canary)))
    error = server_error(repo, capsys)
    assert not canary.exists()
    assert "shadowed_srv/__main__.py changed since its command was approved" in error


def test_a_folder_too_large_to_pin_is_refused_clearly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    repo, marker = script_repo(tmp_path)
    for index in range(5):
        (repo / "srv" / f"data{index}.txt").write_text("x\n")
    monkeypatch.setattr(coverage, "MAX_FILES", 4)
    trust_folder(str(tmp_path))
    capsys.readouterr()
    assert tuiagent(repo, "mcp", "trust", "ping") == 2
    assert "nothing approved: ping: srv/: too large to pin" in capsys.readouterr().err
    error = server_error(repo, capsys)
    assert not marker.exists() and "not started" in error


def test_what_a_folder_covers_skips_caches_virtualenvs_and_hidden_folders(tmp_path: Path) -> None:
    root = tmp_path / "p"
    for name in ("srv/a.py", "srv/data/b.json", "srv/__pycache__/a.pyc", "srv/node_modules/x/i.js",
                 "srv/.cache/c", "srv/venv/pyvenv.cfg", "srv/venv/lib/site.py", "other/o.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    (root / "srv" / "link.py").symlink_to(tmp_path / "outside.py")
    covered = coverage.coverage("python3", ["srv/a.py"], root)
    assert [name for name, _ in covered.files] == ["srv/a.py", "srv/data/b.json", "srv/link.py"]
    node = coverage.coverage("node", ["srv/a.py"], root)  # node resolves srv/node_modules: pinned whole
    assert node.sources == ["srv/", "srv/node_modules/ (dependencies)"] and "srv/node_modules/x/i.js" in node.uncopied
    assert covered.sources == ["srv/"] and covered.refusal is None
    assert coverage.coverage("uv", ["run", "--directory=srv", "a.py"], root).sources == ["srv/"]
    in_srv = coverage.coverage("uv", ["run", "--directory", "srv", "-m", "data"], root)
    assert in_srv.sources == ["srv/data/", "modules importable from the project root (./)", "modules importable from srv/"]
    (root / "other" / "package.json").write_text("{}")
    assert coverage.coverage("npx", ["-y", "./other"], root).sources == ["other/"]  # a code folder
    served = coverage.coverage("npx", ["@modelcontextprotocol/server-filesystem", ".", "srv/data"], root)
    assert served.sources == [] and served.files == []  # folders it serves, not code it loads
    alone = coverage.coverage("srv/venv/lib/site.py", ["srv/data/b.json"], root)  # a virtualenv's file: not its
    assert alone.sources == ["srv/data/", "srv/venv/lib/site.py", "srv/venv/ (dependencies)"]  # folder, its venv
    assert "srv/venv/lib/site.py" in dict(alone.files) and "srv/venv/pyvenv.cfg" in alone.uncopied
    (tmp_path / "outside.py").write_text("print('linked')\n")  # a link is pinned by what it points to, too
    assert coverage.coverage("python3", ["srv/a.py"], root).files != covered.files
    importable = coverage.coverage("python3", ["-m", "nothere"], root)  # the root's modules, nothing else
    assert [name for name, _ in importable.files] == ["other/o.py", "srv/a.py", "srv/link.py"]


def test_approving_again_names_what_changed_and_shows_names_safely(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    repo, marker = script_repo(tmp_path)
    approve(repo, "folder", tmp_path)
    (repo / "srv" / "helpers.py").write_text("VALUE = 2\n")
    (repo / "srv" / "\x1b[2Jfake\nline.py").write_text("")
    capsys.readouterr()
    assert tuiagent(repo, "mcp", "trust", "ping") == 0
    out = capsys.readouterr().out
    assert "changed since the previous approval: srv/\u241b[2Jfake\u2424line.py, srv/helpers.py" in out
    assert "\x1b" not in out and "\nline.py" not in out
    server_error(repo, capsys)
    assert marker.read_text() == "started\n"  # approved as it is now: it starts


def test_a_changed_binary_file_is_shown_by_its_digest(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo, marker = script_repo(tmp_path)
    (repo / "srv" / "native.so").write_bytes(b"\0ELF one")
    approve(repo, "folder", tmp_path)
    (repo / "srv" / "native.so").write_bytes(b"\0ELF two")
    error = server_error(repo, capsys)
    assert not marker.exists() and "srv/native.so changed since its command was approved" in error
    assert "-(srv/native.so: binary or over 1000 kB, sha256" in error and "+(srv/native.so: binary" in error


def test_mcp_list_shows_a_changed_servers_diff_as_lines_with_controls_visible(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The diff is project text: its lines stay lines (each indented under the server), an ESC in it shows as ␛."""
    repo, marker = script_repo(tmp_path)
    approve(repo, "folder", tmp_path)
    (repo / "srv" / "helpers.py").write_text("VALUE = 2  # \x1b[2J\x1b[1;1Hping: running,\x07 3 tools\n")
    capsys.readouterr()
    tuiagent(repo, "mcp", "list")
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and not marker.exists()
    assert "    +VALUE = 2  # \u241b[2J\u241b[1;1Hping: running,\u2407 3 tools" in out.splitlines()
    assert "    --- srv/helpers.py (approved)" in out.splitlines()
