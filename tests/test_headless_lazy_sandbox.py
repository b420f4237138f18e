"""`tuiagent -p` starts the sandbox's warm workers only when a call needs one: a reply that calls no
tool never pays for them, and a sandboxed call afterwards still runs (it starts what it needs)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.cli import main
from tui_agent.core.sandbox.launch import WORKER_SCRIPT


def sandbox_workers(project: Path) -> set[int]:
    """Processes now running tuiagent's sandbox worker for `project`."""
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:  # it ended while the folder was read
            continue
        if str(WORKER_SCRIPT).encode() in argv and str(project).encode() in argv:
            found.add(int(entry.name))
    return found


@contextmanager
def watching_workers(project: Path) -> Iterator[set[int]]:
    """Every sandbox worker process for `project` seen while the block runs (/proc polled every few ms)."""
    seen: set[int] = set()
    done = threading.Event()

    def poll() -> None:
        while not done.is_set():
            seen.update(sandbox_workers(project))
            done.wait(0.003)

    watcher = threading.Thread(target=poll, daemon=True)
    watcher.start()
    try:
        yield seen
    finally:
        done.set()
        watcher.join()


def test_a_reply_without_tool_calls_starts_no_warm_worker(
        repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(text("Hello.")))
    with watching_workers(repo) as seen:
        assert main(["--project", str(repo), "-p", "hi"]) == 0
    assert capsys.readouterr().out == "Hello.\n"
    assert seen == set()


def test_a_sandboxed_call_still_runs_and_leaves_no_worker_behind(
        repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(tool_use("run_shell", {"command": "echo lazy-$((6 * 7))"})), reply(text("Done.")))
    with watching_workers(repo) as seen:
        assert main(["--project", str(repo), "-p", "count", "--yes", "--output-format", "json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["result"] == "Done." and result["tool_calls"][0]["is_error"] is False
    tool_result = api.requests[1].messages[-1]["content"][0]
    assert tool_result["type"] == "tool_result" and "lazy-42" in json.dumps(tool_result["content"])
    assert seen  # the call started a sandbox worker itself
    assert sandbox_workers(repo) == set()  # and the run's end stopped it
