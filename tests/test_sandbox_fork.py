"""Fork servers: offline bubblewrap runs forked from a warm interpreter keep a fresh run's isolation, and are faster."""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path

import pytest

from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy
from tui_agent.core.sandbox.stopping import kill_base, pids_base
from tui_agent.core.sandbox import dispatch
from tui_agent.core.sandbox.dispatch import IDLE_RELEASE_S
from tui_agent.core.sandbox.launch import probe_bubblewrap
from tui_agent.core.sandbox import Snippet, ToolCall

pytestmark = pytest.mark.skipif(probe_bubblewrap() is not None or kill_base() is None,
                                reason="fork servers need bubblewrap and per-run cgroups with cgroup.kill")

WHO_AM_I = """
import os
cgroup = [line for line in open('/proc/self/cgroup').read().splitlines() if ':pids:' in line]
(os.getpid(), os.getsid(0), cgroup[0].rsplit('/', 1)[-1] if cgroup else '', os.environ['HOME'])
"""


async def released_to_one(box: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """Wait (at most 10 idle periods: a loaded machine) until the pool's extra server was closed for being idle. The
    trim already scheduled runs at its time; from then on 0.2 s idle is enough (not a second idle period to wait)."""
    assert box.fork_pool is not None
    monkeypatch.setattr(dispatch, "IDLE_RELEASE_S", 0.2)
    deadline = time.monotonic() + IDLE_RELEASE_S * 10
    while len(box.fork_pool.servers()) > 1 and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert len(box.fork_pool.servers()) == 1


@pytest.fixture
def project(repo: Path) -> Project:
    project = Project.at(repo)
    project.ensure_layout()
    return project


async def test_each_forked_run_has_its_own_process_session_and_cgroup(project: Project) -> None:
    box = await Sandbox.start(project, warm_workers=0)
    try:
        # Read-only runs: a writable one sees the project through an overlay of its own (a fresh sandbox).
        results = [await box.run(Snippet(WHO_AM_I), SandboxPolicy(project_writable=False)) for _ in range(4)]
        assert box.fork_pool is not None and len(box.fork_pool.servers()) == 1  # all four came from one server
    finally:
        await box.aclose()
    assert all(result.ok for result in results), results
    pids = [result.value[0] for result in results]
    assert len(set(pids)) == 4 and all(result.value[1] == result.value[0] for result in results)  # own session
    groups = [result.value[2] for result in results]
    assert len(set(groups)) == 4 and all(group.startswith("tuiagent-") for group in groups)
    assert all(result.value[3] == "/tmp/home" for result in results)
    base = pids_base()
    assert base is not None and not [group for group in groups if (base / group).exists()]  # all removed


async def test_nothing_a_run_leaves_in_private_folders_reaches_the_next_and_the_project_is_untouched(project: Project) -> None:
    readme = project.root / "README.md"
    before = readme.read_bytes()
    box = await Sandbox.start(project, warm_workers=0)
    writable = SandboxPolicy(project_writable=True)
    try:
        planted = await box.run(Snippet("import os\nos.makedirs('/tmp/a/b', exist_ok=True)\nopen('/tmp/a/b/secret', 'w').write('x')\n"
            "open(os.path.expanduser('~/.planted'), 'w').write('x')\nos.symlink('" + str(project.root) + "', '/tmp/link')\n"
            "sorted(os.listdir('/tmp'))"), writable)
        seen = await box.run(Snippet("import os\n(sorted(os.listdir('/tmp')), sorted(os.listdir(os.path.expanduser('~'))))"), writable)
    finally:
        await box.aclose()
    assert planted.ok and "a" in planted.value and "link" in planted.value, planted
    assert seen.ok, seen
    tmp_entries, home_entries = seen.value
    assert "a" not in tmp_entries and "link" not in tmp_entries and home_entries == []
    assert readme.read_bytes() == before  # the wipe never follows a link nor enters the bind-mounted project


async def test_a_daemon_started_by_a_forked_run_dies_with_the_run(project: Project) -> None:
    tag = f"forked-daemon-{time.time_ns()}"
    code = ("import subprocess\nsubprocess.Popen(['/bin/sh', '-c', 'sleep 300; : " + tag + "'], start_new_session=True,\n"
            "    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n'spawned'")
    box = await Sandbox.start(project, warm_workers=0)
    try:
        result = await box.run(Snippet(code))
    finally:
        await box.aclose()
    assert result.ok and result.value == "spawned", result
    assert not [pid for pid in Path("/proc").iterdir() if pid.name.isdigit() and _cmdline_has(pid, tag)]


def _cmdline_has(pid: Path, tag: str) -> bool:
    try:
        return tag.encode() in (pid / "cmdline").read_bytes()
    except OSError:
        return False


async def test_cancel_and_timeout_kill_a_forked_run_and_the_server_serves_on(project: Project) -> None:
    box = await Sandbox.start(project, warm_workers=0)
    try:
        slow = asyncio.create_task(box.run(Snippet("import time\ntime.sleep(30)")))
        await asyncio.sleep(1.0)
        await box.cancel_running()
        cancelled = await asyncio.wait_for(slow, 10)
        timed_out = await box.run(Snippet("while True:\n    pass"), SandboxPolicy(timeout_s=1.0))
        after = await box.run(Snippet("6 * 7"))
    finally:
        await box.aclose()
    assert cancelled.error_kind == "cancelled", cancelled
    assert timed_out.error_kind == "timeout", timed_out
    assert after.ok and after.value == 42, after


async def test_extra_servers_started_for_a_burst_are_released_when_idle(project: Project,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    box = await Sandbox.start(project, warm_workers=0)
    policy = SandboxPolicy(project_writable=False)
    try:
        results = await asyncio.gather(*(box.run(Snippet(f"{i} + 1"), policy) for i in range(8)))
        assert box.fork_pool is not None and len(box.fork_pool.servers()) == 2
        await released_to_one(box, monkeypatch)
    finally:
        await box.aclose()
    assert [result.value for result in results] == list(range(1, 9))


async def test_back_to_back_calls_are_faster_forked_than_with_a_fresh_sandbox_each(project: Project) -> None:
    project.tool_path("ping").write_text('def ping(x: int) -> int:\n    """Echo."""\n    return x\n')

    async def burst(fork_servers: bool) -> float:
        box = await Sandbox.start(project, warm_workers=2, fork_servers=fork_servers)  # the workers are warm now
        try:
            deadline = time.monotonic() + 60
            while box.fork_pool is not None and not box.fork_pool.servers() and time.monotonic() < deadline:
                await asyncio.sleep(0.05)  # the read-only fork server `start` boots in the background is up
            samples = []
            for _ in range(20):
                started = time.perf_counter()
                result = await box.run(ToolCall("ping", "ping", {"x": 1}, str(project.tool_path("ping"))), SandboxPolicy(project_writable=False))  # a tool without WRITES
                samples.append(time.perf_counter() - started)
                assert result.ok and result.value == 1, result
            return statistics.median(samples)
        finally:
            await box.aclose()

    forked, fresh = await burst(True), await burst(False)
    assert forked < fresh, f"forked p50 {forked * 1000:.1f} ms, fresh sandboxes {fresh * 1000:.1f} ms"


async def test_prewarm_boots_the_servers_a_cold_open_will_use_and_they_are_released_when_idle(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    box = await Sandbox.start(project, warm_workers=0)
    try:
        box.prewarm(2)
        assert box.fork_pool is not None
        deadline = time.monotonic() + 60
        while len(box.fork_pool.servers()) < 2 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        servers = box.fork_pool.servers()
        assert len(servers) == 2 and not any(server.busy for server in servers)
        box.prewarm(2)  # already there: nothing more starts
        await asyncio.sleep(0.2)
        assert box.fork_pool.servers() == servers
        policy = SandboxPolicy(project_writable=False)
        results = await asyncio.gather(*(box.run(Snippet(f"{i} * 2"), policy) for i in range(4)))
        assert [result.value for result in results] == [0, 2, 4, 6]
        assert box.fork_pool.servers() == servers  # the runs used the warm ones
        await released_to_one(box, monkeypatch)
    finally:
        await box.aclose()


async def test_a_request_handed_to_a_forked_child_is_never_run_again(project: Project,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The server fails after its child took the request (here: removing the run's cgroup): the run fails, and is not
    sent again to a fresh worker (its child may already have done part of it: a file written, a command run)."""
    from tui_agent.core.sandbox.forkserver import ForkServer

    box = await Sandbox.start(project, warm_workers=0)
    box.overlay_problem = "off for this test: writable runs are forked"
    original = ForkServer._remove_cgroup
    failures = []

    async def failing_once(self: ForkServer, group: object) -> None:
        if not failures:
            failures.append(group)
            raise OSError("cgroup removal failed")
        await original(self, group)  # type: ignore[arg-type]

    monkeypatch.setattr(ForkServer, "_remove_cgroup", failing_once)
    try:
        result = await box.run(Snippet("open('count.txt', 'a').write('x')"), SandboxPolicy(project_writable=True))
        assert failures and not result.ok and "not run again" in (result.error or "") + result.stderr
        assert (project.root / "count.txt").read_text() == "x"
    finally:
        await box.aclose()
