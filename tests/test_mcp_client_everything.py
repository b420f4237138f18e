"""The session's MCP client against `@modelcontextprotocol/server-everything` (the strictest reference server, run
with npx): images reach the model as image blocks, resources as text, roots are the project, elicitation is
declined, a tool that runs only as a task is not offered, and sampling is answered by the session's model once
approved (the TUI asks the person)."""

from __future__ import annotations

import asyncio
import base64
import json
import shutil
from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.test_mcp_client import cli, results
from tui_agent.core.runtime_state import agent_of, mcp_of

pytestmark = pytest.mark.skipif(shutil.which("npx") is None, reason="npx (Node.js) is not installed: "
                                "@modelcontextprotocol/server-everything cannot run")
EVERYTHING = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything@2026.8.31"]}  # an exact release: a newer one may list other tools
PREFIX = "mcp__everything__"


def api_name(tool: str) -> str:
    return PREFIX + tool.replace("-", "_")  # the API name of a server's tool (naming.assign_names)


@pytest.fixture(autouse=True)
def private_trust_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A config folder of the test's own, where the test's folder is a trusted workspace (MCP servers still need theirs)."""
    from tui_agent.core.trust import trust_folder

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    trust_folder(str(tmp_path))


def with_everything(repo: Path) -> None:
    """server-everything configured in the project's `.mcp.json` and trusted (`tuiagent mcp trust --all`)."""
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"everything": EVERYTHING}}))
    assert cli(repo, "mcp", "trust", "--all").returncode == 0


async def ready(runtime, name: str = "everything", timeout: float = 180.0) -> None:
    """npx may download the package first: wait until the server is running (the session does not)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while runtime.workshop.mcp.connections[name].status == "starting":
        assert loop.time() < deadline, "server-everything did not start"
        await asyncio.sleep(0.2)
    assert runtime.workshop.mcp.connections[name].status == "running", runtime.workshop.mcp.connections[name].error


@pytest.mark.timeout(300)
async def test_server_everything_images_resources_roots_elicitation_and_tasks(repo: Path) -> None:
    with_everything(repo)
    with FakeMessagesAPI() as api:
        async with agent_runtime(repo, api) as runtime:
            await ready(runtime)
            api.enqueue(reply(tool_use(api_name("get-tiny-image"), {}), tool_use(api_name("get-roots-list"), {}),
                              tool_use(api_name("get-resource-reference"), {"resourceType": "Text", "resourceId": 1}),
                              tool_use(api_name("trigger-elicitation-request"), {})),
                        reply(text("seen")))
            events = await run_turn(runtime, "show me")
            notes = mcp_of(runtime).notes()
    offered = api.requests[0].tool_names
    assert api_name("get-tiny-image") in offered and api_name("simulate-research-query") not in offered
    assert any("simulate-research-query is not offered" in note for note in notes)
    answers = {block["tool_use_id"]: block for block in api.requests[1].messages[-1]["content"]
               if block.get("type") == "tool_result"}
    calls = {block["name"]: block["id"] for block in api.requests[0 + 1].messages[-2]["content"]
             if block.get("type") == "tool_use"}
    image = answers[calls[api_name("get-tiny-image")]]["content"]
    assert isinstance(image, list) and image[0]["type"] == "text"
    picture = next(block for block in image if block["type"] == "image")
    assert picture["source"]["type"] == "base64" and picture["source"]["media_type"] == "image/png"
    assert base64.b64decode(picture["source"]["data"]).startswith(b"\x89PNG")
    finished = results(events)
    assert repo.resolve().as_uri() in finished[api_name("get-roots-list")].result
    resource = finished[api_name("get-resource-reference")].result
    assert "[resource" in resource and "not shown" not in resource
    assert "declin" in finished[api_name("trigger-elicitation-request")].result.lower()
    assert any("asked for input, declined" in note for note in notes)


@pytest.mark.timeout(300)
async def test_the_tui_asks_the_person_when_a_server_elicits(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from textual.widgets import Input

    from tests.ui_support import SIZE, make_app, ready as app_ready, wait_until
    from tui_agent.ui.screens.elicitation import ElicitationScreen

    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    with_everything(repo)
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await app_ready(pilot)
        await ready(app.runtime)
        call = asyncio.get_running_loop().create_task(mcp_of(app.runtime).call(api_name("trigger-elicitation-request"), {}))
        await wait_until(pilot, lambda: isinstance(app.screen, ElicitationScreen) and "everything asks" in
                         str(app.screen.query_one("#form-title").render()), timeout=30, message="the form")
        form = app.screen
        form.query_one("#arg-name", Input).value = "Ada Lovelace"
        form.query_one("#arg-email", Input).value = "ada@example.com"
        await pilot.press("ctrl+s")
        outcome = await asyncio.wait_for(call, 30)
        assert "accept" in outcome.text and "Ada Lovelace" in outcome.text, outcome.text

        call = asyncio.get_running_loop().create_task(mcp_of(app.runtime).call(api_name("trigger-elicitation-request"), {}))
        await wait_until(pilot, lambda: isinstance(app.screen, ElicitationScreen), timeout=30, message="the form again")
        await pilot.press("escape")
        declined = await asyncio.wait_for(call, 30)
        assert "decline" in declined.text.lower(), declined.text


@pytest.mark.timeout(300)
async def test_server_everything_samples_with_the_sessions_model_once_approved(repo: Path) -> None:
    """Offered sampling, server-everything registers its sampling tool; the request it sends from inside the call
    is asked about, then answered by the session's model."""
    from tui_agent.core.agent.permissions import ApprovalRequest
    from tui_agent.core.mcp.sampling import offer_sampling

    asked: list[ApprovalRequest] = []

    async def approve(request: ApprovalRequest) -> bool:
        asked.append(request)
        return True

    with_everything(repo)
    with FakeMessagesAPI() as api:
        async with agent_runtime(repo, api, approve=approve) as runtime:
            await ready(runtime)
            assert agent_of(runtime) is not None
            offer_sampling(agent_of(runtime), mcp_of(runtime))
            api.enqueue(reply(tool_use(api_name("trigger-sampling-request"), {"prompt": "say hi", "maxTokens": 20})),
                        reply(text("hi there")), reply(text("done")))
            events = await run_turn(runtime, "sample")
    assert api_name("trigger-sampling-request") in api.requests[0].tool_names
    sampling = api.requests[1].body
    assert sampling["max_tokens"] == 20 and sampling["system"][0]["text"] == "You are a helpful test server."
    assert "say hi" in sampling["messages"][0]["content"][0]["text"] and not sampling.get("tools")
    assert [request.tool for request in asked][-1] == "mcp_sampling" and asked[-1].subject == "everything"
    result = results(events)[api_name("trigger-sampling-request")]
    assert not result.is_error and "hi there" in result.result and "endTurn" in result.result


@pytest.mark.timeout(300)
async def test_the_tui_asks_the_person_before_a_server_samples(repo: Path, api: FakeMessagesAPI) -> None:
    from tests.ui_support import SIZE, make_app, ready as app_ready, wait_until
    from tui_agent.ui.screens.approval import ApprovalScreen

    with_everything(repo)
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await app_ready(pilot)
        await ready(app.runtime)
        api.enqueue(reply(text("hi there")))
        arguments = {"prompt": "say hi", "maxTokens": 20}
        call = asyncio.get_running_loop().create_task(mcp_of(app.runtime).call(api_name("trigger-sampling-request"), arguments))
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=30, message="the approval")
        await pilot.press("y")
        outcome = await asyncio.wait_for(call, 30)
        assert "hi there" in outcome.text and not outcome.is_error, outcome.text

        call = asyncio.get_running_loop().create_task(mcp_of(app.runtime).call(api_name("trigger-sampling-request"), arguments))
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=30, message="the approval again")
        await pilot.press("n")
        declined = await asyncio.wait_for(call, 30)
        assert declined.is_error and "declined" in declined.text, declined.text
    assert len(api.requests) == 1 and api.requests[0].body["max_tokens"] == 20
