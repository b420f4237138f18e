"""Scripted session transcripts (written through SessionLog, as a real session is) for the tending tests."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from tui_agent.core.agent.sessions import SessionLog
from tui_agent.core.events import ToolAuthored, ToolCallFinished, ToolCallStarted, TurnStarted
from tui_agent.core.project import Project

_ids = itertools.count(1)
Step = tuple[str, dict[str, Any]]


def write_session(project: Project, turns: list[list[Step]], *, authored: str | None = None) -> Path:
    """A session file whose turns make the given calls; `authored` adds a tool written and then called at the end."""
    log = SessionLog.create(project, model="scripted")
    for number, calls in enumerate(turns):
        log.append_event(TurnStarted(prompt=f"task {number}", session_id=log.id))
        for name, arguments in calls:
            call_id = f"toolu_{next(_ids)}"
            log.append_event(ToolCallStarted(call_id=call_id, name=name, arguments=arguments))
            log.append_event(ToolCallFinished(call_id=call_id, name=name, result="ok", is_error=False, duration_ms=3.0))
    if authored:
        log.append_event(ToolAuthored(name=authored, kind="tool", source="", commit=None, created=True))
        call_id = f"toolu_{next(_ids)}"
        log.append_event(ToolCallStarted(call_id=call_id, name=authored, arguments={"name": "x"}))
        log.append_event(ToolCallFinished(call_id=call_id, name=authored, result="ok", is_error=False, duration_ms=3.0))
    log.close()
    return log.path


def flaky_workflow(name: str) -> list[Step]:
    """The story's four steps: query traces, grep a name, sort by time, diff failures."""
    return [
        ("query_traces", {"service": "checkout", "test": name}),
        ("grep", {"pattern": name, "path": "logs/"}),
        ("run_shell", {"command": f"sort -k2 logs/{name}.log | tail -20"}),
        ("run_shell", {"command": f"diff logs/{name}.pass logs/{name}.fail"}),
    ]


def ordinary_sessions() -> list[list[list[Step]]]:
    """Twelve sessions of ordinary, varied work: reading, searching, editing, running tests, exploring."""
    def read(path: str) -> Step:
        return ("read_file", {"path": path})

    def grep(pattern: str, path: str | None = None) -> Step:
        return ("grep", {"pattern": pattern} | ({"path": path} if path else {}))

    def edit(path: str) -> Step:
        return ("edit_file", {"path": path, "old": "a", "new": "b"})

    def shell(command: str) -> Step:
        return ("run_shell", {"command": command})

    tests = shell("python -m pytest -q")
    return [
        [[("list_files", {"pattern": "**/*.py"}), read("README.md"), read("src/app.py")],
         [grep("def main"), read("src/cli.py"), edit("src/cli.py"), tests]],
        [[read("src/models.py"), edit("src/models.py"), tests, edit("src/models.py"), tests, read("tests/test_models.py")]],
        [[grep("TODO"), read("src/db.py"), grep("connect", "src/"), read("src/pool.py"), edit("src/pool.py"), tests]],
        [[shell("git log --oneline -5"), shell("git diff HEAD~1"), read("CHANGELOG.md"), edit("CHANGELOG.md")]],
        [[read("pyproject.toml"), shell("pip list"), read("requirements.txt"), ("write_file", {"path": "a.txt", "content": "x"})]],
        [[grep("class User"), read("src/users.py"), grep("def save", "src/users.py"), edit("src/users.py"), tests],
         [read("tests/test_users.py"), edit("tests/test_users.py"), shell("python -m pytest tests/test_users.py -q")]],
        [[("run_python", {"code": "import json; len(json.load(open('data.json')))"}), read("data.json"),
          ("run_python", {"code": "sum(1 for _ in open('log.txt'))"}), shell("wc -l log.txt")]],
        [[list_step for list_step in (("list_files", {"pattern": "docs/**/*.md"}), read("docs/index.md"), read("docs/api.md"),
                                     edit("docs/api.md"), read("docs/usage.md"), edit("docs/usage.md"))]],
        [[shell("make lint"), read("src/a.py"), edit("src/a.py"), shell("make lint"), read("src/b.py"), edit("src/b.py"),
          shell("make lint")]],
        [[grep("import requests"), read("src/http.py"), read("src/retry.py"), grep("timeout", "src/http.py"), edit("src/http.py"),
          tests, read("src/retry.py"), edit("src/retry.py"), tests]],
        [[read("Dockerfile"), shell("docker --version"), read("docker-compose.yml"), edit("docker-compose.yml")],
         [read(".github/workflows/ci.yml"), edit(".github/workflows/ci.yml")]],
        [[("search_tools", {"query": "flaky"}), ("call_tool", {"name": "module_sizes", "args": {}}), read("src/big.py"),
          grep("def ", "src/big.py"), ("create_tool", {"name": "x", "source": "..."}), shell("python -m pytest -q")]],
    ]
