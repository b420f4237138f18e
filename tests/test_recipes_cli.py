"""`tuiagent recipes …` (+ --json) in-process, and `tuiagent watch` as a real subprocess reacting to a file change."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.gitrepo import git, user_state
from tests.recipes_helpers import COUNT_LINES, SHOUT, recipe_text
from tui_agent.cli import main

YELL = recipe_text('on = "command"', 'tool = "shout"\nargs = { text = "{args}" }', description="shout it")
YELL_V2 = recipe_text('on = "command"', 'tool = "shout"\nargs = { text = "v2 {args}" }', description="shout it louder")
LINES = recipe_text('on = "file_changed"\npaths = ["src/*.py"]\ndebounce_ms = 50', 'tool = "count_lines"\nargs = { path = "{path}" }',
                    description="count lines of changed sources")


def setup_project(repo: Path) -> None:
    for folder in ("tools", "recipes"):
        (repo / ".agent" / folder).mkdir(parents=True, exist_ok=True)
    (repo / ".agent" / "tools" / "shout.py").write_text(SHOUT)
    (repo / ".agent" / "tools" / "count_lines.py").write_text(COUNT_LINES)
    (repo / ".agent" / "recipes" / "yell.toml").write_text(YELL)
    (repo / ".agent" / "recipes" / "lines.toml").write_text(LINES)
    (repo / ".agent" / "recipes" / "broken.toml").write_text('description = "b"\n[trigger]\non = "file_changed"\n[action]\nprompt = "x"\n')


def cli(capsys: pytest.CaptureFixture[str], repo: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["--project", str(repo), *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def cli_json(capsys: pytest.CaptureFixture[str], repo: Path, *argv: str) -> tuple[int, object]:
    code, out, _err = cli(capsys, repo, *argv, "--json")
    return code, json.loads(out)


def test_recipes_cli_end_to_end(dirty_repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = dirty_repo
    setup_project(repo)
    before = user_state(repo)

    code, listed = cli_json(capsys, repo, "recipes", "list")
    assert code == 0
    assert {item["name"]: item["status"] for item in listed} == {"broken": "broken", "lines": "ok", "yell": "ok"}
    broken = next(item for item in listed if item["name"] == "broken")
    assert broken["error"]["line"] == 2 and "needs \"paths\"" in broken["error"]["message"]
    code, out, _ = cli(capsys, repo, "recipes", "list")
    assert code == 0 and "yell" in out and "shout it" in out and "error [schema] line 2" in out

    code, shown = cli_json(capsys, repo, "recipes", "show", "yell")
    assert code == 0 and shown["source"] == YELL and shown["recipe"]["trigger"]["on"] == "command"

    code, runs = cli_json(capsys, repo, "recipes", "run", "yell", "--args", "hi there")
    assert code == 0 and runs[0]["ok"] and runs[0]["detail"]["value"] == "HI THERE"
    code, out, _ = cli(capsys, repo, "recipes", "run", "lines", "--path", "app.py")
    assert code == 0 and "ok: recipe lines (tool count_lines) count_lines → 1" in out
    code, out, err = cli(capsys, repo, "recipes", "run", "lines")
    assert code == 1 and "no --path" in err

    (repo / ".agent" / "recipes" / "yell.toml").write_text(YELL_V2)  # edited in an editor: committed on next open
    code, history = cli_json(capsys, repo, "recipes", "history", "yell")
    assert [entry["message"] for entry in history] == ["tuiagent: update recipe yell (edited outside tuiagent)",
                                                       "tuiagent: add recipe yell (edited outside tuiagent)"]
    code, diff = cli_json(capsys, repo, "recipes", "diff", "yell")
    assert code == 0 and '+args = { text = "v2 {args}" }' in diff["diff"]

    code, reverted = cli_json(capsys, repo, "recipes", "revert", "yell")
    assert code == 0 and reverted["commit"] and (repo / ".agent/recipes/yell.toml").read_text() == YELL
    code, out, _ = cli(capsys, repo, "recipes", "prune", "yell")
    assert code == 0 and out.startswith("pruned recipe yell in ")
    assert not (repo / ".agent/recipes/yell.toml").exists()
    code, restored = cli_json(capsys, repo, "recipes", "restore", "yell")
    assert code == 0 and restored["record"]["status"] == "ok"
    assert git(repo, "log", "-1", "--format=%s").strip() == "tuiagent: restore recipe yell"

    code, out, err = cli(capsys, repo, "recipes", "show", "nope")
    assert code == 1 and "no recipe named 'nope'" in err
    code, data = cli_json(capsys, repo, "recipes", "prune", "nope")
    assert code == 1 and data["stage"] == "missing" and "no recipe nope" in data["error"]

    code, listed = cli_json(capsys, repo, "recipes", "list")
    assert next(item for item in listed if item["name"] == "lines")["runs"] == 1
    assert user_state(repo) == before


def read_lines_until(stream_queue: "queue.Queue[str]", fragment: str, seen: list[str], timeout: float = 30.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            line = stream_queue.get(timeout=0.1)
        except queue.Empty:
            continue
        seen.append(line)
        if fragment in line:
            return line
    raise AssertionError(f"no line with {fragment!r} in {seen!r}")


def test_watch_subprocess_runs_file_change_recipes_and_stops_on_ctrl_c(repo: Path) -> None:
    setup_project(repo)
    (repo / "src").mkdir()
    env = {**os.environ, "ANTHROPIC_API_KEY": "", "ANTHROPIC_BASE_URL": ""}
    process = subprocess.Popen([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "watch"],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=repo)
    lines: "queue.Queue[str]" = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()  # type: ignore[union-attr]
    seen: list[str] = []
    try:
        ready = read_lines_until(lines, "watching", seen)
        assert "1 file_changed recipe(s) (lines)" in ready and "broken: broken" in ready
        (repo / "src" / "mod.py").write_text("a = 1\nb = 2\n")
        (repo / "README.txt").write_text("no recipe for this\n")
        result = read_lines_until(lines, "recipe lines (file_changed)", seen)
        assert "ok: count_lines → 2" in result
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=20) == 0
        read_lines_until(lines, "stopped", seen, timeout=5)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert not any("Traceback" in line for line in seen), seen
    audit = [json.loads(line) for file in (repo / ".agent" / "runs").glob("*.jsonl") for line in file.read_text().splitlines()]
    assert [entry["args"]["args"] for entry in audit if entry["kind"] == "recipe"] == [{"path": "src/mod.py"}]
