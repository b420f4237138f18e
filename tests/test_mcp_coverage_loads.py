"""An MCP server's approval covers what its interpreter can load beyond its own folder: root modules a `python -m`
package imports, a project virtualenv or node_modules it runs from, a linked folder; and a planted `__pycache__`
file is never loaded in place of a pinned source. Each is checked by its effect: the rewritten code's canary file
is never written without asking."""

from __future__ import annotations

import importlib.util
import json
import marshal
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.repo import hostile_repo
from tests.test_mcp_coverage import EVIL, HELPER, server_error, tuiagent
from tui_agent.core.mcp import coverage
from tui_agent.core.trust import trust_folder

pytestmark = pytest.mark.usefixtures("untrusted_config")


def servers(command: str, *args: str) -> str:
    return json.dumps({"mcpServers": {"ping": {"command": command, "args": list(args)}}})


def approve(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    trust_folder(str(tmp_path))
    capsys.readouterr()
    code = tuiagent(repo, "mcp", "trust", "--all")
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_a_root_module_a_python_m_package_imports_is_pinned(tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """`python -m pkg` puts the project root first on the import path: `import helpers` loads ./helpers.py."""
    marker, canary = tmp_path / "server-started", tmp_path / "canary"
    repo = hostile_repo(tmp_path / "p", {
        ".mcp.json": servers(sys.executable, "-m", "pkg"),
        "pkg/__init__.py": "",
        "pkg/__main__.py": f"import helpers\nopen({str(marker)!r}, 'a').write('started\\n')\n",
        "helpers.py": HELPER,
        "notes/readme.md": "not code\n",
    })
    assert approve(repo, tmp_path, capsys)[0] == 0
    server_error(repo, capsys)
    assert marker.read_text() == "started\n"
    (repo / "notes" / "readme.md").write_text("edited: not importable, not pinned\n")
    server_error(repo, capsys)
    assert marker.read_text() == "started\nstarted\n"
    (repo / "helpers.py").write_text(EVIL.format(canary=str(canary)))  # a run rewrites the root module
    error = server_error(repo, capsys)
    assert not canary.exists() and marker.read_text() == "started\nstarted\n"
    assert "helpers.py changed since its command was approved" in error and "+open(" in error


def test_a_planted_bytecode_file_is_never_loaded_in_place_of_a_pinned_source(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A `__pycache__` entry stamped with the pinned source's mtime and size would run instead of the source: the
    server's bytecode lives outside the project, so the planted file is never read."""
    marker, canary = tmp_path / "server-started", tmp_path / "canary"
    repo = hostile_repo(tmp_path / "p", {
        ".mcp.json": servers(sys.executable, "srv/server.py"),
        "srv/server.py": f"import helpers\nopen({str(marker)!r}, 'a').write('started\\n')\n",
        "srv/helpers.py": HELPER,
    })
    assert approve(repo, tmp_path, capsys)[0] == 0
    source = repo / "srv" / "helpers.py"
    code = compile(EVIL.format(canary=str(canary)), str(source), "exec")
    stamp = source.stat()
    pyc = Path(importlib.util.cache_from_source(str(source)))
    pyc.parent.mkdir(exist_ok=True)
    header = importlib.util.MAGIC_NUMBER + (0).to_bytes(4, "little")
    header += (int(stamp.st_mtime) & 0xFFFFFFFF).to_bytes(4, "little") + (stamp.st_size & 0xFFFFFFFF).to_bytes(4, "little")
    pyc.write_bytes(header + marshal.dumps(code))
    subprocess.run([sys.executable, "-c", "import helpers"], cwd=repo / "srv", check=True)  # the plant works
    assert canary.exists()
    canary.unlink()
    server_error(repo, capsys)
    assert marker.read_text() == "started\n" and not canary.exists()


def test_a_linked_folder_leading_out_is_refused_and_one_inside_is_pinned(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marker, canary = tmp_path / "server-started", tmp_path / "canary"
    repo = hostile_repo(tmp_path / "p", {
        ".mcp.json": servers(sys.executable, "srv/server.py"),
        "srv/server.py": f"import lib.mod\nopen({str(marker)!r}, 'a').write('started\\n')\n",
        "shared/mod.py": HELPER,
    })
    outside = tmp_path / "outside-lib"
    outside.mkdir()
    (outside / "mod.py").write_text(HELPER)
    (repo / "srv" / "lib").symlink_to(outside)
    code, text = approve(repo, tmp_path, capsys)
    assert code == 2 and "srv/lib is a symbolic link to a folder outside the project" in text
    (outside / "mod.py").write_text(EVIL.format(canary=str(canary)))
    error = server_error(repo, capsys)
    assert not canary.exists() and not marker.exists() and "srv/lib is a symbolic link" in error
    (repo / "srv" / "lib").unlink()
    (repo / "srv" / "lib").symlink_to("../shared")  # inside the project: its files are pinned where they are
    assert approve(repo, tmp_path, capsys)[0] == 0
    assert "shared/mod.py" in dict(coverage.coverage(sys.executable, ["srv/server.py"], repo).files)
    (repo / "shared" / "mod.py").write_text(EVIL.format(canary=str(canary)))
    error = server_error(repo, capsys)
    assert not canary.exists() and not marker.exists() and "shared/mod.py changed" in error


def test_a_project_virtualenv_the_server_runs_from_is_pinned(tmp_path: Path,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    marker, canary = tmp_path / "server-started", tmp_path / "canary"
    repo = hostile_repo(tmp_path / "p", {
        ".mcp.json": servers(".venv/bin/python", "srv/server.py"),
        "srv/server.py": f"import depmod\nopen({str(marker)!r}, 'a').write('started\\n')\n",
    })
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(repo / ".venv")], check=True)
    site = Path(subprocess.run([str(repo / ".venv" / "bin" / "python"), "-c", "import site; print(site.getsitepackages()[0])"],
                               check=True, capture_output=True, text=True).stdout.strip())
    (site / "depmod.py").write_text(HELPER)
    assert approve(repo, tmp_path, capsys)[0] == 0
    server_error(repo, capsys)
    assert marker.read_text() == "started\n"
    (site / "depmod.py").write_text(EVIL.format(canary=str(canary)))
    error = server_error(repo, capsys)
    assert not canary.exists() and marker.read_text() == "started\n"
    assert "depmod.py changed since its command was approved" in error


def test_node_modules_a_node_server_resolves_is_pinned(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    marker, canary = tmp_path / "server-started", tmp_path / "canary"
    repo = hostile_repo(tmp_path / "p", {
        ".mcp.json": servers("node", "srv/index.js"),
        "srv/index.js": f"require('dep');\nrequire('fs').appendFileSync({str(marker)!r}, 'started\\n');\n",
        "node_modules/dep/index.js": "module.exports = 1;\n",
    })
    assert approve(repo, tmp_path, capsys)[0] == 0
    server_error(repo, capsys)
    assert marker.read_text() == "started\n"
    evil = f"require('fs').writeFileSync({str(canary)!r}, 'ran');\nmodule.exports = 1;\n"
    (repo / "node_modules" / "dep" / "index.js").write_text(evil)
    error = server_error(repo, capsys)
    assert not canary.exists() and marker.read_text() == "started\n"
    assert "node_modules/dep/index.js changed since its command was approved" in error


def test_remembered_digests_see_a_rewrite_that_keeps_size_and_mtime(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A pinned virtualenv is hashed once (digests remembered between processes by identity and times); a rewrite
    that keeps the size and sets the mtime back still changes the ctime, so it is read again."""
    from tui_agent.core.mcp import digestcache

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(digestcache, "SETTLE_S", 0.0)
    monkeypatch.setattr(digestcache, "_known", None)
    root = tmp_path / "p"
    (root / "srv").mkdir(parents=True)
    module = root / "srv" / "a.py"
    module.write_text("VALUE = 1\n")
    first = dict(coverage.coverage("python3", ["srv/a.py"], root).files)["srv/a.py"]
    assert first in digestcache.cache_file().read_text()
    stamp = module.stat()
    module.write_text("VALUE = 2\n")
    os.utime(module, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))
    assert module.stat().st_mtime_ns == stamp.st_mtime_ns and module.stat().st_size == stamp.st_size
    second = dict(coverage.coverage("python3", ["srv/a.py"], root).files)["srv/a.py"]
    assert second != first
    monkeypatch.setattr(digestcache, "_known", None)  # another process: the file is what it remembers
    remembered = json.loads(digestcache.cache_file().read_text())
    key = next(key for key, value in remembered.items() if value == second)
    digestcache.cache_file().write_text(json.dumps({key: "remembered"}))
    assert dict(coverage.coverage("python3", ["srv/a.py"], root).files)["srv/a.py"] == "remembered"


def test_which_dependency_folders_a_command_loads(tmp_path: Path) -> None:
    root = tmp_path / "p"
    for name in ("server.py", "srv/index.js", ".venv/pyvenv.cfg", ".venv/lib/dep.py", "node_modules/d/i.js",
                 "srv/node_modules/e/i.js", "docs/node_modules/x.js"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    assert coverage.coverage("uv", ["run", "server.py"], root).sources == ["the project root (./)", ".venv/ (dependencies)"]
    assert coverage.coverage("python3", ["server.py"], root).sources == ["the project root (./)"]  # not the venv
    node = coverage.coverage("node", ["srv/index.js"], root)
    assert node.sources == ["srv/", "node_modules/ (dependencies)", "srv/node_modules/ (dependencies)"]
    served = coverage.coverage("npx", ["-y", "some-server", "docs"], root)  # a folder it serves: not its modules
    assert served.sources == ["node_modules/ (dependencies)"]


def test_too_many_root_modules_for_a_python_m_server_is_refused_with_advice(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "p"
    for name in ("pkg/__init__.py", "a.py", "b.py", "lib/c.py", "my-docs/d.py"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("x\n")
    covered = coverage.coverage("python3", ["-m", "pkg"], root)
    assert [name for name, _ in covered.files] == ["a.py", "b.py", "lib/c.py", "pkg/__init__.py"]  # my-docs: no module
    monkeypatch.setattr(coverage, "MAX_FILES", 3)
    refused = coverage.coverage("python3", ["-m", "pkg"], root).refusal or ""
    assert "too large to pin" in refused and "start it as a script" in refused


def test_a_hidden_folder_inside_the_servers_own_folder_is_pinned(tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A server that puts its own hidden folder on the import path (`srv/.lib`) loads code from it: that folder is
    the server's, so a rewrite of it asks again instead of running."""
    marker, canary = tmp_path / "server-started", tmp_path / "canary"
    repo = hostile_repo(tmp_path / "p", {
        ".mcp.json": servers(sys.executable, "srv/server.py"),
        "srv/server.py": ("import os, sys\nsys.path.insert(0, os.path.join(os.path.dirname(__file__), '.lib'))\n"
                          f"import helpers\nopen({str(marker)!r}, 'a').write('started\\n')\n"),
        "srv/.lib/helpers.py": HELPER,
    })
    assert approve(repo, tmp_path, capsys)[0] == 0
    server_error(repo, capsys)
    assert marker.read_text() == "started\n"
    (repo / "srv" / ".lib" / "helpers.py").write_text(EVIL.format(canary=str(canary)))  # a run rewrites it
    error = server_error(repo, capsys)
    assert not canary.exists() and marker.read_text() == "started\n"
    assert "srv/.lib/helpers.py changed since its command was approved" in error
