"""MCP servers used by a session: the reference `mcp-server-time` from PyPI started as a subprocess, driven through
the agent loop (the real anthropic SDK against the local Messages API): list, call, permissions, run_python, death."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, of_type, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.catalog_support import tool_source, wait_for
from tests.cli_in_process import run_in_process
from tui_agent.core.agent.permissions import ApprovalRequest
from tui_agent.core.events import Notice, ToolCallFinished
from tui_agent.core.mcp.naming import API_NAME
from tui_agent.core.runtime_state import Runtime, catalog_of, mcp_of

pytestmark = pytest.mark.usefixtures("server_bytecode")  # servers start warm (conftest)

TIME_SERVER = {"command": sys.executable, "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}
NOW = "mcp__time__get_current_time"
CONVERT = "mcp__time__convert_time"


@pytest.fixture(autouse=True)
def private_trust_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Approvals of MCP server commands go to a store of this test's own (it lives outside the project), in which
    the test's folder is a trusted workspace (MCP servers of an untrusted project never start)."""
    from tui_agent.core.trust import trust_folder

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    trust_folder(str(tmp_path))


def configure(repo: Path, *, approve: bool = True, **extra_servers: dict) -> None:
    """`time` in .mcp.json, `broken` in .agent/config.toml, approved like `tuiagent mcp trust --all` does."""
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": TIME_SERVER, **extra_servers}}))
    (repo / ".agent").mkdir(exist_ok=True)
    (repo / ".agent" / "config.toml").write_text('[mcp.servers.broken]\ncommand = "/nonexistent/mcp-server"\n')
    if approve:
        assert cli(repo, "mcp", "trust", "--all").returncode == 0


def cli(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`tuiagent --project REPO ARGS`, in-process (what the command does is the subject, not its process)."""
    return run_in_process("--project", str(repo), *args)


class Approvals:
    def __init__(self, answer: bool = True) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> bool:
        self.requests.append(request)
        return self.answer


def results(events: list) -> dict[str, ToolCallFinished]:
    return {event.name: event for event in of_type(events, ToolCallFinished)}


def server_pid(command_part: str) -> int:
    """The pid of our child process whose command line contains `command_part`."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            ppid = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if command_part in cmdline and ppid == os.getpid():
            return int(entry.name)
    raise AssertionError(f"no child process running {command_part}")


def sleeping_under(root: int) -> bool:
    """Whether a process below `root` (its sandbox's too: another pid namespace, the same /proc) sleeps in
    nanosleep: the slow tool's `time.sleep`, running."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    for pid in parents:
        ancestor = parents.get(pid)
        while ancestor is not None and ancestor != root and ancestor > 1:
            ancestor = parents.get(ancestor)
        if ancestor == root:
            try:
                if "nanosleep" in Path(f"/proc/{pid}/wchan").read_text():
                    return True
            except OSError:
                continue
    return False


async def test_time_server_tools_are_offered_and_called_with_ask_once(repo: Path) -> None:
    configure(repo)
    approvals = Approvals()
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use(NOW, {"timezone": "Europe/Paris"})), reply(text("it is now")),
                    reply(tool_use(CONVERT, {"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"})),
                    reply(tool_use(NOW, {"timezone": "UTC"})), reply(text("done")))
        async with agent_runtime(repo, api, approve=approvals) as runtime:
            assert any("MCP server broken failed" in p and "/nonexistent/mcp-server" in p for p in runtime.core.problems)
            first = await run_turn(runtime, "what time is it in Paris?")
            second = await run_turn(runtime, "convert, then now again")
            rows = {row.name: row for row in mcp_of(runtime).rows()}
    offered = api.requests[0].tool_names
    assert NOW in offered and CONVERT in offered and all(API_NAME.match(name) for name in offered)
    assert "[MCP server time]" in api.requests[0].tool(NOW)["description"]
    paris = results(first)[NOW]
    assert not paris.is_error and "Europe/Paris" in paris.result and "datetime" in paris.result
    assert not paris.authored  # an MCP tool is not one the agent wrote
    assert "21:00" in results(second)[CONVERT].result
    # `ask` asks before the first call of each MCP tool, not again
    assert [(r.kind, r.tool) for r in approvals.requests] == [("mcp", NOW), ("mcp", CONVERT)]
    assert rows["time"].status == "running" and rows["time"].calls == 3
    assert {t.name: t.calls for t in rows["time"].tools} == {CONVERT: 1, NOW: 2}
    assert rows["broken"].status == "failed" and "No such file" in (rows["broken"].error or "")


async def test_denied_and_read_only_calls_are_refused(repo: Path) -> None:
    configure(repo)
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use(NOW, {"timezone": "UTC"})), reply(text("ok")))
        async with agent_runtime(repo, api, approve=Approvals(answer=False)) as runtime:
            denied = results(await run_turn(runtime, "time?"))[NOW]
        api.enqueue(reply(tool_use(NOW, {"timezone": "UTC"})), reply(text("ok")))
        async with agent_runtime(repo, api, permission_mode="read-only") as runtime:
            refused = results(await run_turn(runtime, "time?"))[NOW]
    assert denied.is_error and "denied" in denied.result
    assert refused.is_error and "read-only" in refused.result


async def test_mcp_tools_compose_with_catalog_tools_in_run_python(repo: Path) -> None:
    configure(repo)
    code = (f"from {CONVERT} import {CONVERT}\nfrom {NOW} import {NOW}\nfrom double import double\n"
            f"tokyo = {CONVERT}(source_timezone='UTC', time='10:30', target_timezone='Asia/Tokyo')\n"
            f"hour = int(tokyo['target']['datetime'][11:13])\n"
            f"{{'hour': hour, 'doubled': double(hour), 'zone': {NOW}(timezone='UTC')['timezone']}}")
    approvals = Approvals()
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("run_python", {"code": code})), reply(text("composed")),
                    reply(tool_use("run_python", {"code": f"from {NOW} import {NOW}\n{NOW}(timezone='Nowhere/City')"})),
                    reply(text("seen")))
        async with agent_runtime(repo, api, approve=approvals) as runtime:
            await catalog_of(runtime).save("double", tool_source("double"))
            composed = results(await run_turn(runtime, "compose"))["run_python"]
            failed = results(await run_turn(runtime, "bad zone"))["run_python"]
            calls = {t.name: t.calls for t in mcp_of(runtime).tools()}
            tier = runtime.core.sandbox.tier
    assert not composed.is_error, composed.result
    assert json.loads(composed.result) == {"hour": 19, "doubled": 38, "zone": "UTC"}
    assert [r.tool for r in approvals.requests] == [CONVERT, NOW]  # the same permissions as a direct call
    assert calls == {CONVERT: 1, NOW: 2}
    assert failed.is_error and "McpToolError" in failed.result and "Nowhere/City" in failed.result
    assert tier in ("bubblewrap", "rlimits")


async def test_a_server_killed_mid_session_is_reported_and_the_session_goes_on(repo: Path) -> None:
    configure(repo)
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use(NOW, {"timezone": "UTC"})), reply(text("first")))
        async with agent_runtime(repo, api) as runtime:
            assert not results(await run_turn(runtime, "time"))[NOW].is_error
            changes: list[str] = []
            mcp_of(runtime).add_listener(lambda: changes.append("changed"))
            os.kill(server_pid("mcp_server_time"), signal.SIGKILL)
            await wait_for(lambda: mcp_of(runtime).rows()[1].status == "exited")  # rows sorted: broken, time
            assert changes and "exited" in (mcp_of(runtime).rows()[1].error or "")
            api.enqueue(reply(tool_use(NOW, {"timezone": "UTC"})), reply(text("the time server is gone")))
            after = await run_turn(runtime, "time again")
            api.enqueue(reply(tool_use("read_file", {"path": "README.md"})), reply(text("still working")))
            still = await run_turn(runtime, "read the readme")
    notices = [n.message for n in of_type(after, Notice)]
    assert any("MCP server time exited" in n for n in notices)
    assert NOW not in api.requests[2].tool_names
    gone = results(after)[NOW]
    assert gone.is_error and "no tool named" in gone.result
    assert not results(still)["read_file"].is_error


async def started(runtime: Runtime) -> None:
    """Until `other` (a whole `tuiagent mcp serve`, seconds on a loaded machine) is up: the session's first request
    waits for a server only READY_WAIT_S, and these tests are about what happens once it is running."""
    await wait_for(lambda: mcp_of(runtime).connections["other"].status != "starting", timeout=90)


async def test_list_changed_from_a_server_is_honoured_at_the_next_request(repo: Path, tmp_path: Path) -> None:
    """The server here is tuiagent's own `mcp serve` on another project: its catalog grows mid-session."""
    from tests.gitrepo import init_repo
    from tests.mcp_helpers import seed_catalog

    other = init_repo(tmp_path / "other")
    await seed_catalog(other, {"double": tool_source("double")})
    configure(repo, other={"command": sys.executable, "args": ["-m", "tui_agent.cli", "--project", str(other),
                                                                  "--trust-project", "mcp", "serve"]})
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("first")))
        async with agent_runtime(repo, api) as runtime:
            await started(runtime)
            await run_turn(runtime, "hello")
            connection = mcp_of(runtime).connections["other"]
            (other / ".agent" / "tools" / "triple.py").write_text(tool_source("triple", "return 3 * x"))
            await wait_for(lambda: connection.stale, timeout=30)
            assert "mcp__other__triple" not in [t.name for t in mcp_of(runtime).tools()]  # not before the next request
            api.enqueue(reply(tool_use("mcp__other__triple", {"x": 5})), reply(text("fifteen")))
            events = await run_turn(runtime, "triple 5")
    assert "mcp__other__double" in api.requests[0].tool_names and "mcp__other__triple" not in api.requests[0].tool_names
    assert "mcp__other__triple" in api.requests[1].tool_names
    assert results(events)["mcp__other__triple"].result == "15"


@pytest.mark.timeout(300)  # two CLI runs, each starting the servers: slow on a loaded machine
def test_mcp_list_command(repo: Path) -> None:
    configure(repo)
    done = cli(repo, "mcp", "list", "--json")
    data = json.loads(done.stdout)
    servers = {server["name"]: server for server in data["servers"]}
    assert done.returncode == 1  # one server failed
    assert servers["time"]["status"] == "running" and {t["name"] for t in servers["time"]["tools"]} == {NOW, CONVERT}
    assert servers["broken"]["status"] == "failed" and "/nonexistent/mcp-server" in servers["broken"]["error"]
    text = cli(repo, "mcp", "list").stdout
    assert "time: running, 2 tools" in text and f"  {NOW}" in text and "broken: failed" in text


async def test_a_server_dying_during_a_call_answers_with_an_error(repo: Path, tmp_path: Path) -> None:
    from tests.gitrepo import init_repo
    from tests.mcp_helpers import seed_catalog

    slow = tool_source("slow", "import time\n    time.sleep(20)\n    return x")
    other = init_repo(tmp_path / "other")
    await seed_catalog(other, {"slow": slow})
    serve = ["-m", "tui_agent.cli", "--project", str(other), "--trust-project", "mcp", "serve"]  # no XDG in its env
    configure(repo, other={"command": sys.executable, "args": serve})
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("mcp__other__slow", {"x": 1})), reply(text("it died")))
        async with agent_runtime(repo, api) as runtime:
            await started(runtime)
            server = server_pid(str(other))
            assert not sleeping_under(server)  # so what is waited for below is the call
            turn = asyncio.create_task(run_turn(runtime, "slow"))
            await wait_for(lambda: sleeping_under(server), 60)  # the call is in flight in the other project's sandbox
            os.kill(server, signal.SIGKILL)
            events = await asyncio.wait_for(turn, 30)
            status = mcp_of(runtime).connections["other"].status
    died = results(events)["mcp__other__slow"]
    assert died.is_error and "other" in died.result and ("exited" in died.result or "closed" in died.result.lower()), died.result
    assert status == "exited"


async def test_servers_start_only_once_their_exact_command_is_approved(repo: Path) -> None:
    """The agent can write .agent/config.toml (and .mcp.json in auto mode): an unapproved command never runs."""
    configure(repo, approve=False)
    listed = json.loads(cli(repo, "mcp", "list", "--json").stdout)
    assert {s["name"]: s["status"] for s in listed["servers"]} == {"broken": "untrusted", "time": "untrusted"}
    assert "tuiagent mcp trust time" in listed["servers"][1]["error"]
    assert cli(repo, "mcp", "trust", "nosuch").returncode == 2
    approved = cli(repo, "mcp", "trust", "time")
    assert approved.returncode == 0 and "approved time: " in approved.stdout and "mcp_server_time" in approved.stdout
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("hi")))
        async with agent_runtime(repo, api) as runtime:
            statuses = {row.name: row.status for row in mcp_of(runtime).rows()}
            assert any("MCP server broken untrusted" in p for p in runtime.core.problems)
            await run_turn(runtime, "hi")
    assert statuses == {"broken": "untrusted", "time": "running"}
    assert NOW in api.requests[0].tool_names
    changed = dict(TIME_SERVER, args=[*TIME_SERVER["args"], "--extra"])  # any change needs a new approval
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"time": changed}}))
    relisted = json.loads(cli(repo, "mcp", "list", "--json").stdout)
    assert relisted["servers"][1]["status"] == "untrusted"


async def test_a_server_crashing_at_start_shows_its_stderr(repo: Path) -> None:
    from tui_agent.core.mcp.hub import McpHub
    from tui_agent.core.project import Project

    crash = {"command": sys.executable, "args": ["-c", "import sys; print('boom: MY_TOKEN is not set', file=sys.stderr); sys.exit(3)"]}
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"crash": crash}}))
    assert cli(repo, "mcp", "trust", "crash").returncode == 0
    hub = await McpHub.start(Project.at(repo))
    try:
        row = hub.rows()[0]
    finally:
        await hub.aclose()
    assert row.status == "failed" and "boom: MY_TOKEN is not set" in (row.error or "") and hub.tools() == []
