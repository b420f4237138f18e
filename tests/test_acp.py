"""`tuiagent acp` driven by the official ACP Python SDK as the client, against a real project and the fake Messages API:
streamed updates, approvals through session/request_permission, session/cancel, modes, and bad input. The first test
and the raw-lines one start the `tuiagent acp` process; the others run its serving code in this process, on pipes."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import pytest
from acp import RequestError, text_block

from tests.acp_helpers import RecordingClient, acp_agent, acp_agent_in_process, agent_command
from tests.fake_messages_api import FakeMessagesAPI, reply, text, thinking, tool_use
from tests.test_mcp_http import HttpServer, http_server  # noqa: F401 (a fixture)

pytestmark = pytest.mark.usefixtures("server_bytecode")  # servers start warm (conftest)


async def test_a_prompt_streams_its_reply_and_an_approved_edit_with_its_diff(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(thinking("A note is asked for."), text("Writing the note."), tool_use("write_file", {"path": "note.txt", "content": "hello\n"})),
                reply(text("Done.")))
    client = RecordingClient("allow_once")
    async with acp_agent(repo, client) as agent:
        session = await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[]), 60)
        assert session.modes is not None and session.modes.current_mode_id == "ask"
        assert {mode.id for mode in session.modes.available_modes} == {"ask", "auto", "read-only", "plan"}
        answer = await asyncio.wait_for(agent.prompt(session_id=session.session_id,
                                                     prompt=[text_block("write a note")]), 60)
    assert answer.stop_reason == "end_turn"
    assert (repo / "note.txt").read_text() == "hello\n"  # approved by the client, written by the agent
    client.updates = [u for u in client.updates if u.session_update != "available_commands_update"]

    kinds = client.kinds()
    assert kinds[0] == "agent_thought_chunk" and kinds[-1] == "agent_message_chunk"
    assert "".join(u.content.text for u in client.updates if u.session_update == "agent_thought_chunk") == "A note is asked for."
    started = next(update for update in client.updates if update.session_update == "tool_call")
    running, finished = [update for update in client.updates if update.session_update == "tool_call_update"]
    assert running.status == "in_progress" and running.tool_call_id == started.tool_call_id  # approved: it runs
    assert kinds.index("tool_call") < kinds.index("tool_call_update")
    assert "".join(u.content.text for u in client.updates[:kinds.index("tool_call")]
                   if u.session_update == "agent_message_chunk") == "Writing the note."
    assert "".join(u.content.text for u in client.updates[kinds.index("tool_call_update") + 1:]
                   if u.session_update == "agent_message_chunk") == "Done."
    assert started.kind == "edit" and started.status == "in_progress" and started.title == "write_file note.txt"
    assert [location.path for location in started.locations] == [str(repo / "note.txt")]
    assert finished.tool_call_id == started.tool_call_id and finished.status == "completed"
    diff = next(item for item in finished.content if item.type == "diff")
    assert diff.path == str(repo / "note.txt") and diff.old_text is None and diff.new_text == "hello\n"

    [(asked_call, options)] = client.permission_requests  # asked once, about the call the client was told of
    assert asked_call.tool_call_id == started.tool_call_id and asked_call.status == "pending"
    assert [option.kind for option in options] == ["allow_once", "allow_always", "reject_once"]
    assert any(item.type == "diff" and item.new_text == "hello\n" for item in asked_call.content)


async def test_a_rejected_command_does_not_run_and_its_call_fails(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(tool_use("run_shell", {"command": "touch canary.txt"})), reply(text("It was refused.")))
    client = RecordingClient("reject_once")
    async with acp_agent_in_process(repo, client) as agent:
        session = await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[]), 60)
        answer = await asyncio.wait_for(agent.prompt(session_id=session.session_id, prompt=[text_block("touch")]), 60)
    assert answer.stop_reason == "end_turn"
    assert not (repo / "canary.txt").exists()
    [(asked_call, _options)] = client.permission_requests
    assert asked_call.content[0].content.text == "touch canary.txt"
    finished = next(update for update in client.updates if update.session_update == "tool_call_update")
    assert finished.status == "failed" and "denied" in finished.content[-1].content.text


async def test_cancel_stops_the_turn_and_its_sandboxed_command(repo: Path, api: FakeMessagesAPI) -> None:
    from tests.test_cancel import STOPPED_WITHIN_S, new_probe_tag, probe_command, processes_with, wait_for

    tag = new_probe_tag()  # a minute's sleep, then PROBE.txt: gone sooner, it was killed, not left to finish
    api.enqueue(reply(tool_use("run_shell", {"command": probe_command(tag)})), reply(text("never asked")))
    client = RecordingClient("allow_once")
    async with acp_agent_in_process(repo, client) as agent:
        session = await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[]), 60)
        prompt = asyncio.ensure_future(agent.prompt(session_id=session.session_id, prompt=[text_block("slow")]))
        await asyncio.wait_for(client.asked.wait(), 60)
        await wait_for(lambda: processes_with(tag), 60, "the command to run in the sandbox")
        cancelled_at = time.monotonic()
        await agent.cancel(session_id=session.session_id)
        answer = await asyncio.wait_for(prompt, 30)
        assert answer.stop_reason == "cancelled" and time.monotonic() - cancelled_at < 5
        await wait_for(lambda: not processes_with(tag), STOPPED_WITHIN_S, "the command's processes to end")
        api.enqueue(reply(text("Still here.")))  # the session goes on after a cancelled prompt
        again = await asyncio.wait_for(agent.prompt(session_id=session.session_id, prompt=[text_block("hi")]), 60)
        assert again.stop_reason == "end_turn"
    assert not (repo / "PROBE.txt").exists()  # the command's process tree was killed, not left to finish
    assert len(api.requests) == 2  # the cancelled turn asked nothing more of the model


async def test_read_only_mode_refuses_an_edit_without_asking(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(tool_use("write_file", {"path": "note.txt", "content": "x"})), reply(text("Refused.")))
    client = RecordingClient("allow_once")
    async with acp_agent_in_process(repo, client) as agent:
        session = await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[]), 60)
        await agent.set_session_mode(session_id=session.session_id, mode_id="read-only")
        with pytest.raises(RequestError):
            await agent.set_session_mode(session_id=session.session_id, mode_id="yolo")
        answer = await asyncio.wait_for(agent.prompt(session_id=session.session_id, prompt=[text_block("edit")]), 60)
    assert answer.stop_reason == "end_turn" and client.permission_requests == []
    assert not (repo / "note.txt").exists()


async def test_a_session_for_another_folder_is_refused_clearly(repo: Path, tmp_path: Path, api: FakeMessagesAPI) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    async with acp_agent_in_process(repo, RecordingClient()) as agent:
        with pytest.raises(RequestError) as refused:
            await asyncio.wait_for(agent.new_session(cwd=str(other), mcp_servers=[]), 60)
    assert refused.value.code == -32602 and str(repo) in str(refused.value.data)


async def test_unknown_fields_are_tolerated_and_another_protocol_version_is_answered_with_1(repo: Path) -> None:
    """Raw lines: initialize asking for version 7 with fields ACP does not define is answered with version 1 (the
    spec: the latest the agent supports); a line that is not JSON gets a JSON-RPC error and the agent goes on."""
    command = agent_command(repo)
    process = await asyncio.create_subprocess_exec(*command, cwd=str(repo), env=dict(os.environ),
                                                   stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None
    try:
        process.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": 7, "clientCapabilities": {"fs": {"readTextFile": False}, "futureThing": {"x": 1}},
            "someNewField": True}}).encode() + b"\n")
        process.stdin.write(b'{"jsonrpc": "2.0", "id": 2, "method": "session/nonexistent", "params": {}}\n')
        await process.stdin.drain()
        first = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
        second = json.loads(await asyncio.wait_for(process.stdout.readline(), 60))
        answers = {answer["id"]: answer for answer in (first, second)}
        assert answers[1]["result"]["protocolVersion"] == 1
        capabilities = answers[1]["result"]["agentCapabilities"]
        assert capabilities["loadSession"] is True and capabilities["promptCapabilities"]["image"] is False
        assert capabilities["mcpCapabilities"] == {"http": True, "sse": False}
        assert answers[1]["result"]["agentInfo"]["name"] == "tuiagent"
        assert answers[2]["error"]["code"] == -32601
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 30)
    assert process.returncode == 0


async def test_load_replays_a_recorded_session_and_the_model_sees_it_again(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(text("Reading."), tool_use("read_file", {"path": "README.md"})), reply(text("A demo.")))
    async with acp_agent_in_process(repo, RecordingClient()) as agent:
        first = await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[]), 60)
        await asyncio.wait_for(agent.prompt(session_id=first.session_id, prompt=[text_block("what is it?")]), 60)

    client = RecordingClient()
    api.enqueue(reply(text("I remember.")))
    async with acp_agent_in_process(repo, client) as agent:
        with pytest.raises(RequestError) as missing:
            await asyncio.wait_for(agent.load_session(cwd=str(repo), session_id="no-such-session", mcp_servers=[]), 60)
        assert missing.value.code == -32602
        loaded = await asyncio.wait_for(agent.load_session(cwd=str(repo), session_id=first.session_id, mcp_servers=[]), 60)
        assert loaded is not None and loaded.modes is not None
        replayed = [u for u in client.updates if u.session_update != "available_commands_update"]  # before the answer
        answer = await asyncio.wait_for(agent.prompt(session_id=first.session_id, prompt=[text_block("and?")]), 60)
    assert answer.stop_reason == "end_turn"
    kinds = [update.session_update for update in replayed]
    assert kinds[0] == "user_message_chunk" and replayed[0].content.text == "what is it?"
    assert kinds.index("tool_call") < kinds.index("tool_call_update") and kinds[-1] == "agent_message_chunk"
    call = replayed[kinds.index("tool_call")]
    assert call.title == "read_file README.md" and call.locations[0].path == str(repo / "README.md")
    assert "".join(u.content.text for u in replayed if u.session_update == "agent_message_chunk") == "Reading.A demo."
    sent = api.requests[-1].messages
    assert sent[0]["content"][0]["text"] == "what is it?" and len(sent) == 5


async def test_slash_commands_are_offered_and_undo_takes_back_the_last_turn(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(tool_use("write_file", {"path": "note.txt", "content": "to be undone\n"})), reply(text("Written.")))
    client = RecordingClient("allow_once")
    async with acp_agent_in_process(repo, client) as agent:
        session = await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[]), 60)
        await asyncio.wait_for(agent.prompt(session_id=session.session_id, prompt=[text_block("write")]), 60)
        assert (repo / "note.txt").exists()
        answer = await asyncio.wait_for(agent.prompt(session_id=session.session_id, prompt=[text_block("/undo")]), 60)
        assert answer.stop_reason == "end_turn" and not (repo / "note.txt").exists()  # taken back, as the TUI's /undo
        api.enqueue(reply(text("Drafting.")))
        await asyncio.wait_for(agent.prompt(session_id=session.session_id, prompt=[text_block("/init keep it short")]), 60)
    [offered] = [u for u in client.updates if u.session_update == "available_commands_update"]
    assert {command.name for command in offered.available_commands} >= {"init", "undo"}
    undo_reply = [u for u in client.updates if u.session_update == "agent_message_chunk"][1]
    assert "undid" in undo_reply.content.text.lower() or "undo" in undo_reply.content.text.lower()
    assert len(api.requests) == 3  # /undo asked nothing of the model; /init is a prompt
    sent = api.requests[-1].messages[-1]["content"]
    assert "AGENTS.md" in json.dumps(sent) and "keep it short" in json.dumps(sent)
    assert "the user undid your changes" in json.dumps(api.requests[-1].messages)


def test_prompt_blocks_become_the_turns_text_and_an_image_is_refused_clearly() -> None:
    from acp import image_block, resource_block, resource_link_block
    from acp.helpers import embedded_text_resource

    from tui_agent.acp.prompts import prompt_text

    text_of = prompt_text([text_block("look at"), resource_link_block("main.py", "file:///p/main.py"),
                           resource_block(embedded_text_resource("file:///p/a.txt", "A-TEXT"))])
    assert text_of == 'look at\n[main.py](file:///p/main.py)\n<context uri="file:///p/a.txt">\nA-TEXT\n</context>'
    with pytest.raises(RequestError) as refused:
        prompt_text([image_block("aGk=", "image/png")])
    assert refused.value.code == -32602 and "not image content" in str(refused.value.data)


async def test_authoring_and_pruning_a_tool_show_as_tool_calls_with_their_diffs(repo: Path, api: FakeMessagesAPI) -> None:
    from tests.catalog_support import tool_source

    source = tool_source("double")
    api.enqueue(reply(tool_use("create_tool", {"name": "double", "source": source})),
                reply(tool_use("prune_tool", {"name": "double"})), reply(text("Made and pruned.")))
    client = RecordingClient("allow_once")
    async with acp_agent_in_process(repo, client) as agent:
        session = await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[]), 60)
        answer = await asyncio.wait_for(agent.prompt(session_id=session.session_id, prompt=[text_block("tool")]), 90)
    assert answer.stop_reason == "end_turn"
    tool_file = str(repo / ".agent" / "tools" / "double.py")
    created, pruned = [u for u in client.updates if u.session_update == "tool_call"]
    assert created.kind == "edit" and created.title == "create_tool .agent/tools/double.py"
    assert pruned.kind == "delete" and pruned.locations[0].path == tool_file
    made, gone = [u for u in client.updates if u.session_update == "tool_call_update" and u.status]
    assert made.status == "completed" and gone.status == "completed", (made, gone)
    [made_diff] = [item for item in made.content if item.type == "diff"]
    assert made_diff.path == tool_file and made_diff.old_text is None and made_diff.new_text == source
    [gone_diff] = [item for item in gone.content if item.type == "diff"]
    assert gone_diff.old_text == source and gone_diff.new_text == ""


async def test_the_clients_stdio_mcp_server_joins_the_session_and_sse_is_refused(repo: Path, api: FakeMessagesAPI) -> None:
    import sys

    from acp.schema import McpServerStdio, SseMcpServer

    clock = McpServerStdio(name="clock", command=sys.executable, args=["-m", "mcp_server_time", "--local-timezone", "UTC"],
                           env=[])
    api.enqueue(reply(tool_use("mcp__clock__get_current_time", {"timezone": "UTC"})), reply(text("It is now.")))
    client = RecordingClient("allow_once")
    async with acp_agent_in_process(repo, client) as agent:
        with pytest.raises(RequestError) as refused:
            await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[
                SseMcpServer(type="sse", name="web", url="http://127.0.0.1:9/sse", headers=[])]), 60)
        assert refused.value.code == -32602 and "sse servers are not supported" in str(refused.value.data)
        session = await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[clock]), 60)
        answer = await asyncio.wait_for(agent.prompt(session_id=session.session_id, prompt=[text_block("time?")]), 60)
    assert answer.stop_reason == "end_turn"
    assert "mcp__clock__get_current_time" in api.requests[0].tool_names
    finished = [u for u in client.updates if u.session_update == "tool_call_update" and u.status == "completed"]
    assert len(finished) == 1 and '"timezone": "UTC"' in finished[0].content[-1].content.text


@pytest.mark.parametrize("offered", [True, False])
async def test_read_file_shows_the_editors_unsaved_buffer_when_the_client_offers_it(repo: Path, api: FakeMessagesAPI,
                                                                                    offered: bool) -> None:
    readme = repo / "README.md"
    on_disk = readme.read_text()
    api.enqueue(reply(tool_use("read_file", {"path": "README.md"})), reply(text("Read.")))
    client = RecordingClient()
    client.buffers[str(readme)] = "UNSAVED-EDITOR-LINE\n"
    async with acp_agent_in_process(repo, client, reads_buffers=offered) as agent:
        session = await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[]), 60)
        await asyncio.wait_for(agent.prompt(session_id=session.session_id, prompt=[text_block("read it")]), 60)
    result = json.dumps(api.requests[-1].messages[-1]["content"])
    assert ("UNSAVED-EDITOR-LINE" in result) is offered and (on_disk.splitlines()[0] in result) is not offered
    assert client.buffer_reads == ([str(readme)] if offered else [])  # never asked of a client that did not offer it
    assert readme.read_text() == on_disk  # the buffer is shown, not written


async def test_an_untrusted_project_says_so_with_the_first_prompt_and_runs_restricted(
        repo: Path, untrusted_config: Path, api: FakeMessagesAPI) -> None:
    (repo / ".agent").mkdir(exist_ok=True)
    api.enqueue(reply(text("Hello.")), reply(text("Again.")))
    client = RecordingClient()
    async with acp_agent_in_process(repo, client) as agent:
        session = await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[]), 60)
        for words in ("hi", "hi again"):
            await asyncio.wait_for(agent.prompt(session_id=session.session_id, prompt=[text_block(words)]), 60)
    warnings = [u.content.text for u in client.updates if u.session_update == "agent_thought_chunk"]
    assert any("not trusted" in warning and "tuiagent trust" in warning for warning in warnings)
    assert len([w for w in warnings if "not trusted" in w]) == 1  # told once, with the first prompt
    assert "create_tool" not in api.requests[0].tool_names  # restricted: no catalog


async def test_allow_always_covers_the_next_call_of_its_rule_for_the_session(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(tool_use("run_shell", {"command": "touch a.txt"})),
                reply(tool_use("run_shell", {"command": "touch b.txt"})), reply(text("Both.")))
    client = RecordingClient("allow_always")
    async with acp_agent_in_process(repo, client) as agent:
        session = await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[]), 60)
        await asyncio.wait_for(agent.prompt(session_id=session.session_id, prompt=[text_block("touch both")]), 60)
    assert (repo / "a.txt").exists() and (repo / "b.txt").exists()
    [(_call, options)] = client.permission_requests  # the second command was covered by `run_shell(touch:*)`
    assert [option.name for option in options if option.kind == "allow_always"] == [
        "Always allow run_shell(touch:*) (this session)"]
    assert not (repo / ".agent" / "config.local.toml").exists()  # a session rule: nothing saved


async def test_the_models_plan_reaches_the_client_as_a_plan_update(repo: Path, api: FakeMessagesAPI) -> None:
    entries = [{"content": "read the README", "status": "completed"},
               {"content": "write the note", "status": "in_progress", "priority": "high"}]
    api.enqueue(reply(tool_use("update_plan", {"entries": entries})),
                reply(tool_use("update_plan", {"entries": [{"content": "x", "status": "finished"}]})),
                reply(text("Planned.")))
    client = RecordingClient()
    async with acp_agent_in_process(repo, client) as agent:
        session = await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[]), 60)
        answer = await asyncio.wait_for(agent.prompt(session_id=session.session_id, prompt=[text_block("plan")]), 60)
    assert answer.stop_reason == "end_turn" and client.permission_requests == []
    [plan] = [u for u in client.updates if u.session_update == "plan"]  # the malformed second one is only an error
    assert [(e.content, e.status, e.priority) for e in plan.entries] == [
        ("read the README", "completed", "medium"), ("write the note", "in_progress", "high")]
    reloaded = RecordingClient()
    async with acp_agent_in_process(repo, reloaded) as agent:  # session/load replays the plan too
        await asyncio.wait_for(agent.load_session(cwd=str(repo), session_id=session.session_id, mcp_servers=[]), 60)
    assert [u.entries for u in reloaded.updates if u.session_update == "plan"] == [plan.entries]
    failed = [u for u in client.updates if u.session_update == "tool_call_update" and u.status == "failed"]
    assert len(failed) == 1 and "status must be one of" in failed[0].content[-1].content.text


@pytest.mark.parametrize("answer", ["allow_once", "reject_once"])
async def test_plan_mode_asks_to_approve_the_plan_and_approval_switches_to_ask(repo: Path, api: FakeMessagesAPI,
                                                                               answer: str) -> None:
    api.enqueue(reply(tool_use("write_file", {"path": "note.txt", "content": "x"})),
                reply(tool_use("propose_plan", {"plan": "1. write note.txt"})),
                reply(tool_use("write_file", {"path": "note.txt", "content": "x"})), reply(text("Done.")))
    client = RecordingClient(answer)
    async with acp_agent_in_process(repo, client) as agent:
        session = await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[]), 60)
        await agent.set_session_mode(session_id=session.session_id, mode_id="plan")
        await asyncio.wait_for(agent.prompt(session_id=session.session_id, prompt=[text_block("note")]), 60)
    asked = [call for call, _options in client.permission_requests]
    assert "1. write note.txt" in asked[0].content[0].content.text and asked[0].kind == "switch_mode"
    assert [option.kind for option in client.permission_requests[0][1]] == ["allow_once", "reject_once"]
    switched = [u.current_mode_id for u in client.updates if u.session_update == "current_mode_update"]
    if answer == "allow_once":  # approved: the mode is ask, so the write after it is asked about (and allowed)
        assert switched == ["ask"] and len(asked) == 2 and (repo / "note.txt").read_text() == "x"
    else:  # refused: still plan mode, the write after it is refused without asking
        assert switched == [] and len(asked) == 1 and not (repo / "note.txt").exists()


async def test_the_clients_http_mcp_server_joins_a_new_and_a_loaded_session(repo: Path, api: FakeMessagesAPI,
                                                                           http_server: HttpServer) -> None:  # noqa: F811
    from acp.schema import HttpHeader, HttpMcpServer

    loud = HttpMcpServer(type="http", name="loud", url=http_server.url, headers=[HttpHeader(name="X-Test", value="1")])
    api.enqueue(reply(tool_use("mcp__loud__shout", {"words": "from the editor"})), reply(text("Shouted.")),
                reply(tool_use("mcp__loud__shout", {"words": "after a load"})), reply(text("Again.")))
    client = RecordingClient("allow_once")
    async with acp_agent_in_process(repo, client) as agent:
        with pytest.raises(RequestError) as refused:
            await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[
                HttpMcpServer(type="http", name="bad", url="ftp://127.0.0.1/mcp", headers=[])]), 60)
        assert refused.value.code == -32602 and "must start with http:// or https://" in str(refused.value.data)
        session = await asyncio.wait_for(agent.new_session(cwd=str(repo), mcp_servers=[loud]), 60)
        await asyncio.wait_for(agent.prompt(session_id=session.session_id, prompt=[text_block("shout")]), 60)
    async with acp_agent_in_process(repo, RecordingClient("allow_once")) as agent:
        await asyncio.wait_for(agent.load_session(cwd=str(repo), session_id=session.session_id, mcp_servers=[loud]), 60)
        await asyncio.wait_for(agent.prompt(session_id=session.session_id, prompt=[text_block("again")]), 60)
    assert http_server.calls() == ["from the editor", "after a load"]  # the server really ran both calls
    assert "mcp__loud__shout" in api.requests[0].tool_names and "mcp__loud__shout" in api.requests[2].tool_names
    assert "FROM THE EDITOR!" in json.dumps(api.requests[1].messages[-1]["content"])
