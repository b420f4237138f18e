"""`tuiagent tools …` end to end: text and --json output, exit codes, git effects, the --init-git rule."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gitrepo import user_state
from tests.catalog_support import files_in, subjects, tool_source
from tui_agent.cli import main


def cli(capsys: pytest.CaptureFixture[str], repo: Path, *args: str) -> tuple[int, str, str]:
    code = main(["--project", str(repo), "tools", *args])
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys: pytest.CaptureFixture[str], repo: Path, *args: str) -> object:
    code, out, err = cli(capsys, repo, *args)
    assert code == 0, err
    return json.loads(out)


def test_tools_commands(dirty_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tools = dirty_repo / ".agent" / "tools"
    tools.mkdir(parents=True)
    (tools / "double.py").write_text(tool_source("double", test="assert double(1) == 2"))
    before = user_state(dirty_repo)

    listed = cli_json(capsys, dirty_repo, "list", "--json")
    assert [(t["name"], t["status"], t["calls"]) for t in listed] == [("double", "unused", 0)]
    assert listed[0]["description"] == "Double a number."
    assert subjects(dirty_repo)[0].startswith("tuiagent: catch up tool double")

    assert cli_json(capsys, dirty_repo, "run", "double", "--arg", "x=4", "--json")["value"] == 8
    assert cli_json(capsys, dirty_repo, "run", "double", "--args", '{"x": 2}', "--json")["value"] == 4
    code, out, _ = cli(capsys, dirty_repo, "run", "double", "--arg", "x=3")
    assert (code, out.strip()) == (0, "6")
    code, out, _ = cli(capsys, dirty_repo, "list")
    assert code == 0 and out.splitlines()[1].split()[:4] == ["double", "ok", "3", "0"]

    shown = cli_json(capsys, dirty_repo, "show", "double", "--json")
    assert shown["source"] == (tools / "double.py").read_text() and shown["spec"]["input_schema"]["required"] == ["x"]
    code, out, _ = cli(capsys, dirty_repo, "show", "double")
    assert code == 0 and "def double" in out and "[ok]" in out

    (tools / "double.py").write_text(tool_source("double", "return x + x", test="assert double(1) == 2"))
    cli_json(capsys, dirty_repo, "list", "--json")  # picks up the edit, commits it
    history = cli_json(capsys, dirty_repo, "history", "double", "--json")
    assert len(history) == 2 and all(len(h["rev"]) == 40 for h in history)
    diff = cli_json(capsys, dirty_repo, "diff", "double", "--json")["diff"]
    assert "-    return 2 * x" in diff and "+    return x + x" in diff
    code, out, _ = cli(capsys, dirty_repo, "diff", "double", history[1]["rev"])
    assert code == 0 and "+    return x + x" in out

    reverted = cli_json(capsys, dirty_repo, "revert", "double", "--json")
    assert reverted["name"] == "double" and "2 * x" in (tools / "double.py").read_text()
    assert subjects(dirty_repo)[0] == f"tuiagent: revert tool double to {history[1]['rev'][:8]}"
    pruned = cli_json(capsys, dirty_repo, "prune", "double", "--json")
    assert pruned["committed"] and not (tools / "double.py").exists()
    assert cli_json(capsys, dirty_repo, "list", "--json") == []
    restored = cli_json(capsys, dirty_repo, "restore", "double", "--json")
    assert restored["status"] in ("ok", "unused") and ".agent/tools/double.py" in files_in(dirty_repo)
    drift = cli_json(capsys, dirty_repo, "drift", "--json")
    assert drift[0]["name"] == "double" and drift[0]["drifted"] is False and drift[0]["tests_pass"] is True
    code, out, _ = cli(capsys, dirty_repo, "drift", "double")
    assert code == 0 and "no drift" in out and "1 tests pass" in out

    assert user_state(dirty_repo) == before

    code, out, err = cli(capsys, dirty_repo, "show", "ghost")
    assert code == 1 and "no tool named 'ghost'" in err
    code, out, _ = cli(capsys, dirty_repo, "history", "ghost", "--json")
    assert code == 1 and json.loads(out)["stage"] == "missing" and "no tool named" in json.loads(out)["error"]
    code, _, err = cli(capsys, dirty_repo, "run", "double", "--arg", "y=1")
    assert code == 1 and "has no argument(s) y" in err
    code, _, err = cli(capsys, dirty_repo, "run", "double", "--arg", "novalue")
    assert code == 2 and "KEY=VALUE" in err
    code, _, err = cli(capsys, dirty_repo, "run", "double", "--arg", "x=1", "--arg", "x=2")
    assert code == 2 and "--arg x is given twice" in err
    code, out, _ = cli(capsys, dirty_repo, "run", "double", "--args", "[1]", "--json")
    assert code == 2 and "JSON object" in json.loads(out)["error"] and json.loads(out)["stage"] == "usage"
    code, out, err = cli(capsys, dirty_repo, "run", "double", "--args", '{"x": null}', "--json")
    assert code == 1 and json.loads(out)["stage"] == "arguments" and "must be an integer, not null" in json.loads(out)["error"]
    code, _, err = cli(capsys, dirty_repo, "revert", "ghost")
    assert code == 1


def test_no_repository_without_a_tty_needs_init_git(tmp_path: Path) -> None:
    project = tmp_path / "plain"
    project.mkdir()
    command = [sys.executable, "-m", "tui_agent.cli", "--project", str(project), "tools"]
    result = subprocess.run([*command, "list"], capture_output=True, text=True, stdin=subprocess.DEVNULL, check=False)
    assert result.returncode == 2 and "--init-git" in result.stderr  # issue 10: nothing is created outside a repository
    assert not (project / ".git").exists() and not (project / ".agent").exists()
    result = subprocess.run([*command, "--init-git", "list", "--json"], capture_output=True, text=True,
                            stdin=subprocess.DEVNULL, check=False)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [] and (project / ".git").is_dir()


def test_run_a_writes_tool_needs_allow_writes(dirty_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.test_catalog_writes import writer_source

    tools = dirty_repo / ".agent" / "tools"
    tools.mkdir(parents=True)
    (tools / "app_writer.py").write_text(writer_source("app_writer", "WRITES = True"))
    (tools / "plain_writer.py").write_text(writer_source("plain_writer"))
    listed = {t["name"]: t["spec"]["writes"] for t in cli_json(capsys, dirty_repo, "list", "--json")}
    assert listed == {"app_writer": True, "plain_writer": False}
    code, out, _ = cli(capsys, dirty_repo, "list")
    rows = {line.split()[0]: line.split()[4] for line in out.splitlines()[1:]}
    assert out.splitlines()[0].split()[4] == "ACCESS" and rows == {"app_writer": "writes", "plain_writer": "-"}
    code, out, _ = cli(capsys, dirty_repo, "show", "app_writer")
    assert code == 0 and "access: writes project files (WRITES = True" in out
    assert cli_json(capsys, dirty_repo, "show", "app_writer", "--json")["spec"]["writes"] is True
    before = user_state(dirty_repo)

    code, _, err = cli(capsys, dirty_repo, "run", "app_writer", "--arg", "text=nope")
    assert code == 1 and "pass --allow-writes to let it change project files" in err and "Read-only file system" in err
    code, _, err = cli(capsys, dirty_repo, "run", "plain_writer", "--arg", "text=nope", "--allow-writes")
    assert code == 1 and "declares WRITES = True and runs with --allow-writes" in err
    assert user_state(dirty_repo) == before

    code, out, _ = cli(capsys, dirty_repo, "run", "app_writer", "--arg", "text=yes", "--allow-writes")
    assert (code, out.strip()) == (0, "written") and (dirty_repo / "app.py").read_text() == "yes"
