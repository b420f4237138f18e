"""Issue 33's speed, what the cheaper paths keep: a batch's process compiles each tool file once but never runs it (each
call's child runs the module from the top, with its own state, its own traceback and its own load error); an input
schema checked once is still what refuses a bad call or a broken schema every time; a read-only run no longer looks
at the protected paths first (its warm worker is kept when one appears), and the path stays out of its reach; a turn
of read-only calls ends where it began for undo (no second snapshot), a writing turn is still taken back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.core.catalog.argcheck import check_arguments
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.events import ToolCallFinished
from tui_agent.core.project import Project
from tui_agent.core.runtime_state import agent_of, catalog_of
from tui_agent.core.sandbox import Sandbox, SandboxPolicy, Snippet, ToolBatch, ToolCall

COUNTER = '''\
import os

LOADS = []
LOADS.append(os.getpid())
print("loaded in", os.getpid())


def bump(x: int) -> dict:
    LOADS.append(x)
    return {"loads": list(LOADS), "pid": os.getpid()}


def fail(x: int) -> int:
    return _deeper(x)


def _deeper(x):
    raise ValueError(f"bad {x}")
'''


@pytest.fixture
async def box(repo: Path) -> AsyncIterator[Sandbox]:
    project = Project.at(repo)
    project.ensure_layout()
    sandbox = await Sandbox.start(project, tier="bubblewrap", warm_workers=1)
    yield sandbox
    await sandbox.aclose()


def tool_file(folder: Path, name: str, text: str) -> str:
    path = folder / f"{name}.py"
    path.write_text(text)
    return str(path)


async def test_each_batched_call_runs_its_module_from_the_top_in_its_own_process(box: Sandbox, repo: Path) -> None:
    path = tool_file(repo / ".agent" / "tools", "counter", COUNTER)
    calls = ToolBatch(tuple(ToolCall("counter", "bump", {"x": x}, path) for x in (1, 2, 3)))
    results = await box.run(calls, SandboxPolicy(project_writable=False))
    assert all(result.ok for result in results), results
    values = [result.value for result in results]
    assert all(isinstance(value, dict) for value in values)
    pids = [value["pid"] for value in values if isinstance(value, dict)]
    # no call sees another's state, and the module's top level ran in each call's own process, not before the fork
    assert [value["loads"] for value in values if isinstance(value, dict)] == [[pid, x] for pid, x in zip(pids, (1, 2, 3), strict=True)]
    assert [result.stdout for result in results] == [f"loaded in {pid}\n" for pid in pids]
    assert len(set(pids)) == 3


async def test_a_batched_call_keeps_its_traceback_and_a_broken_file_fails_each_call(box: Sandbox, repo: Path) -> None:
    tools = repo / ".agent" / "tools"
    good = tool_file(tools, "counter", COUNTER)
    broken = tool_file(tools, "broken", "def bump(x: int) -> int:\n    return (x\n")
    missing = str(tools / "gone.py")
    calls = ToolBatch((ToolCall("counter", "fail", {"x": 7}, good), ToolCall("broken", "bump", {"x": 1}, broken),
                       ToolCall("gone", "bump", {"x": 1}, missing), ToolCall("broken", "bump", {"x": 2}, broken),
                       ToolCall("counter", "bump", {"x": 4}, good)))
    results = await box.run(calls, SandboxPolicy(project_writable=False))
    failed, syntax, gone, syntax_again, fine = results
    assert not failed.ok and "ValueError: bad 7" in (failed.error or "")
    assert "_deeper" in (failed.error or "") and "counter.py" in (failed.error or "")  # the tool's own frames
    assert "worker.py" not in (failed.error or "")  # and none of the sandbox's
    for result in (syntax, syntax_again):
        assert not result.ok and "SyntaxError" in (result.error or ""), result
    assert not gone.ok and "gone.py" in (gone.error or ""), gone
    assert fine.ok and isinstance(fine.value, dict) and fine.value["loads"][1:] == [4]


LOUD = """import sys


def shout(n: int) -> int:
    sys.stdout.write("BEGIN" + "x" * n + "END")
    return n
"""


async def test_a_batched_call_whose_output_was_cut_says_so_in_its_result(box: Sandbox, repo: Path) -> None:
    path = tool_file(repo / ".agent" / "tools", "loud", LOUD)
    loud, quiet = await box.run(ToolBatch((ToolCall("loud", "shout", {"n": 200_000}, path),
                                           ToolCall("loud", "shout", {"n": 10}, path))), SandboxPolicy(project_writable=False))
    assert loud.ok and loud.output_truncated, loud.to_dict()["output_truncated"]
    assert loud.stdout.startswith("BEGIN") and loud.stdout.endswith("END") and "bytes of stdout cut here" in loud.stdout
    assert quiet.ok and not quiet.output_truncated and quiet.stdout == "BEGIN" + "x" * 10 + "END"


WRITE_ENVRC = "open('.envrc', 'w').write('export PWNED=1\\n')"


async def test_a_read_only_run_keeps_its_warm_worker_when_a_protected_path_appears(box: Sandbox, repo: Path) -> None:
    read_only = SandboxPolicy(project_writable=False)
    pool, launch = box.dispatch.warm, box.dispatch.warm_kinds()[0]
    assert not launch.project_writable
    [before] = pool.waiting(launch)
    (repo / ".envrc").write_text("export SAFE=1\n")  # a protected name: writable runs get it bound read-only
    result = await box.run(Snippet(WRITE_ENVRC), read_only)
    assert not result.ok and "Read-only file system" in (result.error or ""), result
    assert before.process.returncode == 1  # it served the run (exiting with the run's status; a discarded one is killed)
    writable = await box.run(Snippet(WRITE_ENVRC), SandboxPolicy(project_writable=True))
    assert not writable.ok and "Read-only file system" in (writable.error or ""), writable  # made for today's layout
    assert (repo / ".envrc").read_text() == "export SAFE=1\n"


SCHEMA = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}, "required": ["n"]}


def test_a_checked_schema_still_refuses_every_bad_call() -> None:
    assert check_arguments("f", SCHEMA, {"n": 2.0}) == {"n": 2}
    for _attempt in range(2):
        with pytest.raises(PipelineError, match="at least 1"):
            check_arguments("f", SCHEMA, {"n": 0})
        with pytest.raises(PipelineError, match="no argument"):
            check_arguments("f", SCHEMA, {"n": 1, "m": 2})
    assert check_arguments("f", SCHEMA, {"n": 3}) == {"n": 3}


def test_a_broken_schema_is_refused_each_time_and_a_changed_one_is_checked_anew() -> None:
    schema: dict[str, object] = {"type": "object", "properties": {"n": {"type": "no-such-type"}}}
    for _attempt in range(2):
        with pytest.raises(PipelineError, match="not a usable JSON schema"):
            check_arguments("f", schema, {"n": 1})
    schema["properties"] = {"n": {"type": "string"}}  # the tool's new version, same dict
    assert check_arguments("f", schema, {"n": "a"}) == {"n": "a"}
    with pytest.raises(PipelineError, match="must be a string"):
        check_arguments("f", schema, {"n": 1})
    assert check_arguments("g", {"type": "object", "properties": {"n": {"type": "number", "x": float("inf")}}},
                           {"n": 1}) == {"n": 1}  # not JSON: checked, never cached


PEEK = '''def peek(x: int) -> int:
    """Read note.txt.

    Args:
        x: a number
    """
    with open("note.txt", encoding="utf-8") as handle:
        return x + len(handle.read())
'''


async def test_a_turn_of_read_only_calls_ends_where_it_began_and_a_writing_turn_is_still_undone(
        repo: Path, api: FakeMessagesAPI) -> None:
    """Only reads (built-in and catalog tools without WRITES): undo takes no second snapshot at the turn's end, so an
    edit the person saved meanwhile is not the turn's; a turn that writes is still checkpointed and taken back."""
    (repo / "note.txt").write_text("note\n")
    tools = repo / ".agent" / "tools"
    tools.mkdir(parents=True)
    (tools / "peek.py").write_text(PEEK)
    async with agent_runtime(repo, api) as runtime:
        agent, undo = agent_of(runtime), runtime.core.undo
        assert agent is not None and undo is not None and catalog_of(runtime).spec("peek") is not None
        api.enqueue(reply(tool_use("read_file", {"path": "note.txt"}), tool_use("peek", {"x": 1}),
                          tool_use("call_tool", {"name": "peek", "args": {"x": 2}})), reply(text("done")),
                    reply(tool_use("write_file", {"path": "agent.txt", "content": "agent\n"})), reply(text("done")))
        async for event in agent.run_turn("read"):
            if isinstance(event, ToolCallFinished):
                assert not event.is_error, event.result
                (repo / "app.py").write_text("print('mine')\n")  # the person saves a file while the calls run
        assert undo.last_turn is not None and undo.last_turn[0] == undo.last_turn[1]
        assert undo.last_turn_paths() == []
        await run_turn(runtime, "write")
        assert (repo / "agent.txt").read_text() == "agent\n" and undo.last_turn_paths() == ["agent.txt"]
        for _turn in range(2):
            result = await undo.undo_last(runtime.core.session)
            assert result.ok, result.message
        assert not (repo / "agent.txt").exists() and (repo / "app.py").read_text() == "print('mine')\n"
