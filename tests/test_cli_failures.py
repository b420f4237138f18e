"""CLI failures: one line on stderr, or a JSON object on stdout with --json (argument errors too); sandbox run's
--json and --timeout; a closed pipe ends the command quietly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tui_agent.cli import main

ROOT = Path(__file__).resolve().parent.parent


def run(capsys: pytest.CaptureFixture[str], repo: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["--project", str(repo), *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("argv,message", [
    (["tools", "frob"], "tuiagent tools: argument tools_command: invalid choice: 'frob'"),
    (["tools", "show"], "tuiagent tools show: the following arguments are required: name"),
    (["tools", "run", "x", "--arg"], "tuiagent tools run: argument --arg: expected one argument"),
    (["recipes", "list", "--bogus"], "tuiagent: unrecognized arguments: --bogus"),
    (["sandbox", "status", "--tier", "none"], "tuiagent sandbox status: argument --tier: invalid choice: 'none'"),
    (["--permission-mode", "yolo", "-p", "x"], "tuiagent: argument --permission-mode: invalid choice: 'yolo'"),
])
def test_argument_errors_are_one_line_or_a_json_object(repo: Path, capsys: pytest.CaptureFixture[str], argv: list[str],
                                                       message: str) -> None:
    code, out, err = run(capsys, repo, *argv)
    assert code == 2 and out == "" and err.startswith("usage: ") and message in err.splitlines()[-1]
    code, out, err = run(capsys, repo, *argv, "--json")
    failure = json.loads(out)
    assert code == 2 and failure["stage"] == "usage" and message in failure["error"] and err == ""


@pytest.mark.parametrize("argv,message", [
    (["tools", "show", "Bad Name"], "tuiagent tools show: 'Bad Name' is not a valid tool name"),
    (["tools", "run", "../x"], "tuiagent tools run: '../x' is not a tool name but a path"),
    (["recipes", "show", "Bad Name"], "tuiagent recipes show: 'Bad Name' is not a valid recipe name"),
])
def test_a_name_that_cannot_name_anything_is_one_line_or_a_json_object(repo: Path, capsys: pytest.CaptureFixture[str],
                                                                       argv: list[str], message: str) -> None:
    code, out, err = run(capsys, repo, *argv)
    assert code == 2 and out == "" and err.startswith(message) and len(err.splitlines()) == 1
    code, out, err = run(capsys, repo, *argv, "--json")
    failure = json.loads(out)
    assert code == 2 and failure["stage"] == "usage" and failure["error"].startswith(message) and err == ""


def test_a_malformed_allow_rule_for_recipes_is_a_json_object_with_json(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    message = "'run_shell(' is not an allow rule: use TOOL, TOOL(exact command) or TOOL(prefix:*)"
    code, out, err = run(capsys, repo, "--allow", "run_shell(", "recipes", "list", "--json")
    failure = json.loads(out)
    assert code == 2 and failure["stage"] == "usage" and failure["error"].startswith(message) and err == ""
    code, out, err = run(capsys, repo, "--allow", "run_shell(", "recipes", "list")
    assert code == 2 and out == "" and err.startswith(f"tuiagent: {message}")


def test_headless_failures_are_json_with_output_format_json(repo: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(variable, raising=False)
    code, out, _ = run(capsys, repo, "-p", "hi", "--output-format", "json")
    assert code == 2 and json.loads(out)["stage"] == "model" and "No model is configured" in json.loads(out)["error"]
    code, out, _ = run(capsys, repo, "-p", "hi", "--resume", "nope", "--output-format=stream-json")
    assert code == 2 and json.loads(out)["stage"] == "session"


@pytest.mark.parametrize("timeout", ["0", "-1", "nan", "inf", "-inf", "1e999", "abc"])
def test_sandbox_run_timeout_must_be_a_positive_finite_number(repo: Path, capsys: pytest.CaptureFixture[str], timeout: str) -> None:
    (repo / "script.py").write_text("print('ran')\n")
    code, out, err = run(capsys, repo, "sandbox", "run", "script.py", f"--timeout={timeout}")
    assert code == 2 and "ran" not in out and "argument --timeout" in err and "seconds" in err.splitlines()[-1]
    code, out, _ = run(capsys, repo, "sandbox", "run", "script.py", f"--timeout={timeout}", "--json")
    assert code == 2 and json.loads(out)["stage"] == "usage"


def test_sandbox_run_json(repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(repo)
    (repo / "ok.py").write_text("print('hello')\n")
    (repo / "fails.py").write_text("print('before')\nraise SystemExit(3)\n")
    code, out, _ = run(capsys, repo, "sandbox", "run", "ok.py", "--timeout", "20", "--json")
    result = json.loads(out)
    assert code == 0 and result["ok"] and result["stdout"] == "hello\n" and "stage" not in result
    code, out, _ = run(capsys, repo, "sandbox", "run", "fails.py", "--json")
    result = json.loads(out)
    assert code == 3 and result["exit_code"] == 3 and result["stdout"] == "before\n"
    assert result["error"] == "SystemExit: 3" and result["stage"] == "exception"
    code, out, _ = run(capsys, repo, "sandbox", "run", "missing.py", "--json")
    assert code == 2 and json.loads(out) == {"error": "sandbox run: no such file: missing.py", "stage": "usage"}


def test_a_closed_pipe_ends_the_command_quietly(repo: Path) -> None:
    tools = repo / ".agent" / "tools"
    tools.mkdir(parents=True)
    for index in range(3):
        (tools / f"t{index}.py").write_text(f'def t{index}() -> int:\n    """Return {index}."""\n    return {index}\n')
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    assert subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "tools", "list"],
                          capture_output=True, env=env, timeout=120).returncode == 0
    child = subprocess.Popen([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "tools", "list", "--json"],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()  # the reader is gone before the first line is written, as with `| head -0`
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=120) == 141 and stderr == ""
    shell = subprocess.run(["bash", "-o", "pipefail", "-c",
                            f"{sys.executable} -m tui_agent.cli --project {repo} tools list --json | head -1"],
                           capture_output=True, text=True, env=env, timeout=120)
    assert shell.stdout == "[\n" and shell.stderr == ""


def test_watch_ends_when_its_reader_leaves(repo: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    shell = subprocess.run(["bash", "-o", "pipefail", "-c", f"{sys.executable} -m tui_agent.cli --project {repo} watch | head -1"],
                           capture_output=True, text=True, env=env, timeout=60)
    assert shell.stdout.startswith("[info] watching ") and shell.stderr == ""
    assert shell.returncode == 141  # ended by the closed pipe, as `tools list | head -1` is: no Ctrl-C needed


@pytest.mark.parametrize("argv", [["-p", "hi"], ["tools", "list"], []])
def test_without_git_on_the_path_every_command_says_so_in_one_line(repo: Path, argv: list[str]) -> None:
    no_git = {**os.environ, "PYTHONPATH": str(ROOT), "PATH": str(Path(sys.executable).parent)}
    no_git.pop("GIT_PYTHON_GIT_EXECUTABLE", None)
    assert not any((Path(folder) / "git").exists() for folder in no_git["PATH"].split(os.pathsep))
    done = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), *argv], capture_output=True,
                          text=True, env=no_git, timeout=120)
    assert done.returncode == 1 and done.stdout == "", done.stderr
    assert done.stderr.startswith("tuiagent: git is not installed, or not on PATH") and done.stderr.count("\n") == 1
    version = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--version"], capture_output=True, text=True,
                             env=no_git, timeout=120)
    assert version.returncode == 0 and version.stdout.startswith("tuiagent ")
