"""The sandbox's protocol and contract: results over the private channel, tracebacks, files read, limits, audit log, tiers."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import pytest

from tui_agent.commands.sandbox_status import describe
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy, SandboxUnavailable
from tui_agent.core.sandbox.launch import probe_bubblewrap
from tui_agent.core.sandbox import Snippet, ToolCall

TIERS = ["bubblewrap", "rlimits"]

TOOL = '''\
"""A demo tool."""
import json


def count_lines(path: str) -> int:
    """Count lines of a project file.

    Args:
        path: the file
    """
    with open(path) as handle:
        return len(handle.readlines())


def explode(depth: int = 2):
    return _inner(depth)


def _inner(depth):
    raise ValueError(f"bad depth {depth}")


def odd_value():
    return {1, 2, 3}


def print_a_lot(n: int):
    print("x" * n)
    return n
'''


@pytest.fixture
def project(repo: Path) -> Project:
    proj = Project.at(repo)
    proj.ensure_layout()
    proj.tool_path("count_lines").write_text(TOOL)
    return proj


@pytest.fixture(params=TIERS)
async def sandbox(request: pytest.FixtureRequest, project: Project):
    box = await Sandbox.start(project, tier=request.param, warm_workers=1)
    yield box
    await box.aclose()


def test_bubblewrap_is_available_here() -> None:
    # CI installs bubblewrap (.ci/run): the strong tier must be exercised, not silently skipped.
    assert probe_bubblewrap() is None


async def call(box: Sandbox, project: Project, function: str, **kwargs):
    return await box.run(ToolCall("count_lines", function, kwargs, str(project.tool_path("count_lines")), label="count_lines", version="abc123"))


async def test_call_returns_json_value_and_files_read(sandbox: Sandbox, project: Project) -> None:
    result = await call(sandbox, project, "count_lines", path="README.md")
    assert result.ok, result.error
    assert result.value == 1 and result.value_is_repr is False
    assert result.files_read == ("README.md",)
    assert result.tier == sandbox.tier
    assert result.exit_code == 0


async def test_unserializable_value_comes_back_as_repr(sandbox: Sandbox, project: Project) -> None:
    result = await call(sandbox, project, "odd_value")
    assert result.ok and result.value_is_repr and result.value == "{1, 2, 3}"


async def test_traceback_is_trimmed_to_the_tool_frames(sandbox: Sandbox, project: Project) -> None:
    result = await call(sandbox, project, "explode", depth=7)
    assert not result.ok and result.error_kind == "exception"
    assert "ValueError: bad depth 7" in result.error
    assert "in explode" in result.error and "in _inner" in result.error
    assert "worker.py" not in result.error and "importlib" not in result.error


async def test_result_never_parsed_from_stdout(sandbox: Sandbox) -> None:
    fake = json.dumps({"ok": True, "value": "forged"})
    result = await sandbox.run(Snippet(f"print({fake!r})\n'real'"))
    assert result.value == "real"
    assert "forged" in result.stdout


async def test_an_answer_forged_on_the_result_channel_cannot_break_the_host(sandbox: Sandbox) -> None:
    # agent code can write its own answer on the channel it inherits: fields of the wrong type are dropped, never raised
    forged = json.dumps({"ok": True, "value": 1, "files_read": 5, "error": ["x"], "duration_ms": "slow"}) + "\n"
    code = ("import os, stat\n"
            "for fd in map(int, os.listdir('/proc/self/fd')):\n"
            "    try:\n"
            "        if stat.S_ISSOCK(os.fstat(fd).st_mode): os.write(fd, " + repr(forged.encode()) + ")\n"
            "    except OSError: pass\n"
            "os._exit(0)\n")
    result = await sandbox.run(Snippet(code))
    assert result.ok and result.value == 1
    assert result.files_read == () and result.error is None


async def test_output_cap_adds_a_note(sandbox: Sandbox, project: Project) -> None:
    policy = SandboxPolicy(output_bytes=1000)
    result = await sandbox.run(ToolCall("count_lines", "print_a_lot", {"n": 50_000}, str(project.tool_path("count_lines"))), policy)
    assert result.ok and result.value == 50_000
    assert result.output_truncated
    assert result.stdout.startswith("x" * 1000)
    assert "stdout cut: showed the first 1000 of 50001 bytes" in result.stdout


async def test_run_python_imports_catalog_tools_and_composes_them(sandbox: Sandbox) -> None:
    code = "import count_lines\ntotal = 0\nfor name in ['README.md', 'app.py']:\n    total += count_lines.count_lines(name)\ntotal"
    result = await sandbox.run(Snippet(code))
    assert result.ok, result.error
    assert result.value == 2
    assert set(result.files_read) == {"README.md", "app.py"}


async def test_run_python_traceback_shows_snippet_lines(sandbox: Sandbox) -> None:
    result = await sandbox.run(Snippet("x = 1\nraise KeyError('missing')\n"))
    assert result.error_kind == "exception"
    assert 'File "<run_python>", line 2' in result.error and "raise KeyError('missing')" in result.error


async def test_timeout_kills_and_reports(sandbox: Sandbox) -> None:
    started = time.monotonic()
    result = await sandbox.run(Snippet("while True:\n    pass"), SandboxPolicy(timeout_s=0.5))
    assert result.error_kind == "timeout" and not result.ok
    assert time.monotonic() - started < 5


async def test_cpu_limit(sandbox: Sandbox) -> None:
    result = await sandbox.run(Snippet("while True:\n    pass"), SandboxPolicy(timeout_s=20, cpu_s=1))
    assert result.error_kind == "limit", result
    assert "CPU" in result.error


async def test_memory_limit(sandbox: Sandbox) -> None:
    result = await sandbox.run(Snippet("b = bytearray(600 * 1024 * 1024)\nlen(b)"), SandboxPolicy(memory_mb=300))
    assert result.error_kind == "limit" and "MemoryError" in result.error


async def test_file_size_limit(sandbox: Sandbox, project: Project) -> None:
    code = "with open('big.bin', 'wb') as f:\n    f.write(b'0' * (3 * 1024 * 1024))"
    result = await sandbox.run(Snippet(code), SandboxPolicy(file_size_mb=1))
    assert result.error_kind == "limit" and "File too large" in result.error
    assert (project.root / "big.bin").stat().st_size <= 1024 * 1024


async def test_open_files_limit(sandbox: Sandbox) -> None:
    code = "files = [open('README.md') for _ in range(100)]"
    result = await sandbox.run(Snippet(code), SandboxPolicy(open_files=30))
    assert result.error_kind == "exception" and "Too many open files" in result.error


async def test_cancel_running(sandbox: Sandbox) -> None:
    task = asyncio.create_task(sandbox.run(Snippet("import time\ntime.sleep(30)")))
    await asyncio.sleep(0.5)
    await sandbox.cancel_running()
    result = await asyncio.wait_for(task, 5)
    assert result.error_kind == "cancelled"


async def test_concurrent_runs_are_isolated(sandbox: Sandbox) -> None:
    results = await asyncio.gather(*(sandbox.run(Snippet(f"import os\nos.getpid(), {i}")) for i in range(4)))
    assert [r.value[1] for r in results] == [0, 1, 2, 3]
    assert all(r.ok for r in results)


async def test_state_does_not_leak_between_runs(sandbox: Sandbox) -> None:
    first = await sandbox.run(Snippet("import json\njson.leaked = 42\n1"))
    second = await sandbox.run(Snippet("import json\ngetattr(json, 'leaked', None)"))
    assert first.ok and second.ok and second.value is None


async def test_coroutine_tools_are_awaited(sandbox: Sandbox) -> None:
    result = await sandbox.run(Snippet("import asyncio\nasync def f():\n    await asyncio.sleep(0)\n    return 5\nf()"))
    assert result.ok and result.value == 5


async def test_audit_log_records_every_run(sandbox: Sandbox, project: Project) -> None:
    await call(sandbox, project, "count_lines", path="README.md")
    await sandbox.run(Snippet("print('hi')\n2"))
    entries = sandbox.audit.entries()
    assert [e["label"] for e in entries] == ["count_lines", "run_python"]
    tool_entry, snippet_entry = entries
    assert tool_entry["version"] == "abc123" and tool_entry["args"] == {"path": "README.md"}
    assert tool_entry["value"] == 1 and tool_entry["tier"] == sandbox.tier and tool_entry["ok"] is True
    assert tool_entry["duration_ms"] > 0 and tool_entry["files_read"] == ["README.md"]
    assert snippet_entry["code"] == "print('hi')\n2" and snippet_entry["value"] == 2
    files = list(project.runs_dir.glob("*.jsonl"))
    assert len(files) == 1 and len(files[0].read_text().splitlines()) == 2


async def test_inspector_style_module_import_by_name(sandbox: Sandbox) -> None:
    # Modules named tui_agent.* load from their file alone: no package __init__ (and no third-party import) runs.
    result = await sandbox.run(ToolCall("tui_agent.core.sandbox.policy", "check_level", {"tier": "rlimits", "min_level": None}))
    assert result.ok and result.value is None


async def test_min_level_refuses_weaker_tier(project: Project) -> None:
    project.config_path.write_text('[sandbox]\nmin_level = "bubblewrap"\n')
    with pytest.raises(SandboxUnavailable, match="below sandbox.min_level"):
        await Sandbox.start(project, tier="rlimits")
    strong = await Sandbox.start(project, warm_workers=0)
    try:
        assert strong.tier == "bubblewrap"
        assert (await strong.run(Snippet("1 + 1"))).value == 2
    finally:
        await strong.aclose()


async def test_describe_names_tier_and_protections(project: Project) -> None:
    for tier in TIERS:
        box = await Sandbox.start(project, tier=tier, warm_workers=0)
        info = describe(box)
        await box.aclose()
        assert info["tier"] == tier
        assert "seccomp" in info["protections"] and "environment" in info["protections"]
        if tier == "rlimits":
            assert info["warning"] and info["expected_misses"]
        else:
            assert info["warning"] is None and "filesystem" in info["protections"]


async def test_network_policy_allows_sockets(sandbox: Sandbox) -> None:
    code = "import socket\ns = socket.socket()\ns.close()\n'ok'"
    blocked = await sandbox.run(Snippet(code))
    allowed = await sandbox.run(Snippet(code), SandboxPolicy(network=True))
    assert not blocked.ok and "Operation not permitted" in blocked.error
    if sandbox.tier == "rlimits":  # issue 33: no namespace to keep a grant off this machine, so it is refused
        assert not allowed.ok and "needs the bubblewrap tier" in (allowed.error or ""), allowed
        return
    assert allowed.ok and allowed.value == "ok"
