"""The agent and project writes by agent code: WRITES tools ask (ask), pass (auto) or are refused (read-only);
run_python is read-only without asking except in auto mode; other catalog tools never write."""

from __future__ import annotations

from pathlib import Path

from tests.agent_helpers import agent_runtime, of_type, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.gitrepo import user_state
from tests.catalog_support import tool_source
from tests.test_catalog_writes import WRITE_APP_SNIPPET, writer_source
from tui_agent.core.agent.permissions import ApprovalRequest
from tui_agent.core.events import ApprovalDenied
from tui_agent.core.runtime_state import catalog_of

ORIGINAL_APP = "print('hello, unstaged')\n"


def add_tools(repo: Path) -> None:
    """app_writer declares WRITES, plain_writer does not (both try to overwrite app.py); picked up at startup."""
    tools = repo / ".agent" / "tools"
    tools.mkdir(parents=True, exist_ok=True)
    (tools / "app_writer.py").write_text(writer_source("app_writer", "WRITES = True"))
    (tools / "plain_writer.py").write_text(writer_source("plain_writer"))


class Recorder:
    """An approval callback that answers from a list and notes each request with the user's state at that moment."""

    def __init__(self, repo: Path, answers: list[bool]) -> None:
        self.repo, self.answers = repo, list(answers)
        self.asked: list[tuple[ApprovalRequest, dict[str, str]]] = []

    async def __call__(self, request: ApprovalRequest) -> bool:
        self.asked.append((request, user_state(self.repo)))
        return self.answers.pop(0)


async def test_ask_mode_writes_tool_asks_plain_tool_and_run_python_are_read_only(dirty_repo: Path) -> None:
    add_tools(dirty_repo)
    before = user_state(dirty_repo)
    approve = Recorder(dirty_repo, [False, True])
    with FakeMessagesAPI() as api:
        api.enqueue(
            reply(tool_use("plain_writer", {"text": "sneaky"}), tool_use("app_writer", {"text": "denied"}),
                  tool_use("run_python", {"code": WRITE_APP_SNIPPET}),
                  tool_use("call_tool", {"name": "app_writer", "args": {"text": "approved\n"}})),
            reply(text("done")))
        async with agent_runtime(dirty_repo, api, approve=approve, sandbox_tier="bubblewrap", permission_mode="ask") as runtime:
            events = await run_turn(runtime, "rewrite app.py")
    plain, denied, snippet, approved = api.requests[1].tool_results()
    assert plain["is_error"] and "Read-only file system" in plain["content"]
    assert denied["is_error"] and "denied" in denied["content"]
    assert snippet["is_error"] and "Read-only file system" in snippet["content"] and "read-only for run_python" in snippet["content"]
    assert not approved.get("is_error") and approved["content"] == "written"
    # asked exactly twice, both for the WRITES tool with its arguments; the user's files were intact each time
    assert [(r.kind, r.tool) for r, _ in approve.asked] == [("write", "app_writer")] * 2
    assert '"text": "denied"' in approve.asked[0][0].detail and '"text": "approved\\n"' in approve.asked[1][0].detail
    assert all(state == before for _, state in approve.asked)
    assert [e.name for e in of_type(events, ApprovalDenied)] == ["app_writer"]
    assert (dirty_repo / "app.py").read_text() == "approved\n"


async def test_auto_mode_writes_without_asking(dirty_repo: Path) -> None:
    add_tools(dirty_repo)
    approve = Recorder(dirty_repo, [])
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("app_writer", {"text": "auto\n"})), reply(tool_use("run_python", {"code": WRITE_APP_SNIPPET})),
                    reply(tool_use("plain_writer", {"text": "still no"})), reply(text("done")))
        async with agent_runtime(dirty_repo, api, approve=approve, sandbox_tier="bubblewrap", permission_mode="auto") as runtime:
            await run_turn(runtime, "rewrite app.py")
            after_tool = api.requests[1].tool_results()[0]
            snippet = api.requests[2].tool_results()[0]
    assert not after_tool.get("is_error") and after_tool["content"] == "written"
    assert not snippet.get("is_error") and snippet["content"] == "done"
    plain = api.requests[3].tool_results()[0]
    assert plain["is_error"] and "Read-only file system" in plain["content"]  # no WRITES: read-only in every mode
    assert approve.asked == []
    assert (dirty_repo / "app.py").read_text() == "from run_python"


async def test_read_only_mode_refuses_writes_tools_and_run_python_imports_last_good_tools(dirty_repo: Path) -> None:
    add_tools(dirty_repo)
    (dirty_repo / ".agent" / "tools" / "double.py").write_text(tool_source("double"))
    approve = Recorder(dirty_repo, [])
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("app_writer", {"text": "refused"}), tool_use("run_python", {"code": WRITE_APP_SNIPPET}),
                          tool_use("run_python", {"code": "import double\n[double.double(21), open('app.py').read()]"})),
                    reply(text("done")))
        async with agent_runtime(dirty_repo, api, approve=approve, sandbox_tier="bubblewrap", permission_mode="read-only") as runtime:
            before = user_state(dirty_repo)
            (dirty_repo / ".agent" / "tools" / "double.py").write_text("def double(x: int) -> int:\n    return (x\n")  # broken on disk
            await run_turn(runtime, "try")
            assert catalog_of(runtime).get("double").status == "broken"
    refused, snippet, composed = api.requests[1].tool_results()
    assert refused["is_error"] and "read-only mode" in refused["content"]
    assert snippet["is_error"] and "Read-only file system" in snippet["content"]
    assert not composed.get("is_error") and '42' in composed["content"] and "hello, unstaged" in composed["content"]
    assert approve.asked == []
    assert user_state(dirty_repo) == before


async def test_run_python_asks_where_the_sandbox_cannot_keep_the_project_read_only(repo: Path) -> None:
    approve = Recorder(repo, [False])
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("run_python", {"code": WRITE_APP_SNIPPET})), reply(text("ok")))
        async with agent_runtime(repo, api, approve=approve, sandbox_tier="rlimits", permission_mode="ask") as runtime:
            await run_turn(runtime, "try")
    [result] = api.requests[1].tool_results()
    assert result["is_error"] and "denied" in result["content"]
    assert [(r.kind, r.tool) for r, _ in approve.asked] == [("shell", "run_python")]
    assert (repo / "app.py").read_text() == "print('hello')\n"
