"""The scripted analyst of bench_authoring.py: a stand-in model that reads the tool results it is sent and answers from them.

With authoring on it does the first task by hand, writes `flaky_tests` with create_tool, calls it, and from then on
calls only that tool; with authoring off it lists and reads the logs for every task. It never sees the expected
answers: it parses the read_file / tool results in each request, so a broken harness (a tool that does not run, a
result that does not arrive) gives a wrong answer.
"""

from __future__ import annotations

import re
from typing import Any

from tests.fake_api import Reply, reply, text, tool_use

FLAKY_TOOL = '''"""Find the flaky tests of a service from its run logs."""

from pathlib import Path

DEPENDS_ON = ["logs/**/*.log"]


def flaky_tests(service: str) -> list[str]:
    """List the tests of one service that passed in one run and failed in another.

    Args:
        service: The service's folder name under logs/.
    """
    seen: dict[str, set[str]] = {}
    for path in sorted(Path("logs", service).glob("run-*.log")):
        for line in path.read_text().splitlines():
            status, _, name = line.partition(" ")
            seen.setdefault(name, set()).add(status)
    return sorted(name for name, statuses in seen.items() if len(statuses) == 2)


def test_flaky_tests() -> None:
    assert flaky_tests("no-such-service") == []
'''

TASK = re.compile(r"Which tests of the `(\w+)` service")


class ScriptedAnalyst:
    """`respond_with` callback of the fake Messages API."""

    def __init__(self, *, authoring: bool, runs: int) -> None:
        self.authoring = authoring
        self.runs = runs

    def __call__(self, request: Any) -> Reply:
        service, step = self._task(request.messages)
        results = _result_texts(request)
        if self.authoring and "flaky_tests" in request.tool_names:
            if step == 0 or not results or "created tool" in results[0]:
                return reply(tool_use("flaky_tests", {"service": service}))
            return reply(text(", ".join(sorted(set(re.findall(r"test_\w+", results[0]))))))
        if step == 0:
            return reply(tool_use("list_files", {"pattern": f"logs/{service}/*.log"}))
        if step == 1:
            names = [line.strip() for line in results[0].splitlines() if line.strip().endswith(".log")]
            return reply(*(tool_use("read_file", {"path": name}) for name in sorted(names)))
        if self.authoring:
            return reply(tool_use("create_tool", {"name": "flaky_tests", "source": FLAKY_TOOL}))
        return reply(text(", ".join(_flaky_from_logs(results))))

    @staticmethod
    def _task(messages: list[dict[str, Any]]) -> tuple[str, int]:
        """The service the newest task asks about, and how many replies the model gave since it was asked."""
        for index in range(len(messages) - 1, -1, -1):
            content = messages[index]["content"]
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            for block in blocks:
                found = TASK.search(block.get("text", "")) if block.get("type") == "text" else None
                if found and messages[index]["role"] == "user":
                    return found.group(1), sum(1 for m in messages[index:] if m["role"] == "assistant")
        return "", 0


def _result_texts(request: Any) -> list[str]:
    texts = []
    for block in request.tool_results():
        content = block.get("content")
        texts.append(content if isinstance(content, str) else "\n".join(p.get("text", "") for p in content or []))
    return texts


def _flaky_from_logs(logs: list[str]) -> list[str]:
    seen: dict[str, set[str]] = {}
    for log in logs:
        for line in log.splitlines():
            found = re.search(r"\b(PASS|FAIL) (test_\w+)", line)
            if found:
                seen.setdefault(found.group(2), set()).add(found.group(1))
    return sorted(name for name, statuses in seen.items() if len(statuses) == 2)
