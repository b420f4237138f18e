"""Fresh pre-started workers under bubblewrap: each run in a sandbox of its own (its own cgroup, removed after it; a
private /tmp nothing reaches the next run through), a batch's calls kept apart inside their one worker, a warm pool
that starts no more than it needs (read-only workers kept once one was used), and a cold open's prewarm released once
idle."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy, Snippet, ToolBatch, ToolCall
from tui_agent.core.sandbox.dispatch import IDLE_RELEASE_S, WarmPool
from tui_agent.core.sandbox.launch import Launch, command, probe_bubblewrap, project_layout
from tui_agent.core.sandbox.stopping import kill_base, pids_base
from tui_agent.core.sandbox.toolchain import discover
from tests.procs import processes

pytestmark = pytest.mark.skipif(probe_bubblewrap() is not None, reason="needs bubblewrap")
READ_ONLY = SandboxPolicy(project_writable=False)
READ_ONLY_LAUNCH = Launch("bubblewrap", project_writable=False)
WHO_AM_I = """
import os
groups = [line.rsplit('/', 1)[-1] for line in open('/proc/self/cgroup').read().splitlines() if '/tuiagent-' in line]
(sorted(set(groups)), os.environ['HOME'])
"""
PLANTER = '''import os


def plant(name: str) -> dict:
    """What an earlier call left in /tmp and the home, then leave some more; whether the batch's memory is open."""
    seen = {"tmp": sorted(os.listdir("/tmp")), "home": sorted(os.listdir(os.path.expanduser("~")))}
    os.makedirs(f"/tmp/{name}/deeper", exist_ok=True)
    open(os.path.expanduser(f"~/.{name}"), "w").write("x")
    try:
        os.close(os.open(f"/proc/{os.getppid()}/mem", os.O_RDWR))
        seen["batch_memory_writable"] = True
    except OSError:
        seen["batch_memory_writable"] = False
    return seen
'''


@pytest.fixture
def project(repo: Path) -> Project:
    project = Project.at(repo)
    project.ensure_layout()
    return project


async def until(condition: Callable[[], bool], what: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"never: {what}"
        await asyncio.sleep(0.05)


def children() -> set[int]:
    """This process's live child processes (each worker's leader is one)."""
    return {pid for pid, state, parent, _group in processes() if parent == os.getpid() and state != "Z"}


@pytest.mark.skipif(kill_base() is None and pids_base() is None, reason="needs per-run cgroups")
async def test_each_run_has_its_own_cgroup_removed_after_it(project: Project) -> None:
    box = await Sandbox.start(project, warm_workers=2)
    try:
        results = [await box.run(Snippet(WHO_AM_I), READ_ONLY) for _ in range(4)]
    finally:
        await box.aclose()
    assert all(result.ok for result in results), results
    groups = [result.value[0] for result in results]
    assert all(len(group) == 1 and group[0].startswith("tuiagent-") for group in groups), groups
    assert len({group[0] for group in groups}) == 4
    assert all(result.value[1] == "/tmp/home" for result in results)
    bases = [base for base in (kill_base(), pids_base()) if base is not None]
    assert not [group for group in groups for base in bases if (base / group[0]).exists()]  # all removed


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
    assert readme.read_bytes() == before


async def test_a_batch_empties_the_private_folders_between_its_calls_and_none_can_write_its_memory(
        project: Project) -> None:
    path = project.tool_path("planter")
    path.write_text(PLANTER)
    box = await Sandbox.start(project, warm_workers=1)
    try:
        results = await box.run(ToolBatch(tuple(ToolCall("planter", "plant", {"name": name}, str(path))
                                                for name in ("first", "second", "third"))), READ_ONLY)
    finally:
        await box.aclose()
    assert all(result.ok for result in results), results
    fresh = results[0].value["tmp"]  # what the sandbox itself puts there: HOME, the mount points of a project in /tmp
    assert "home" in fresh and "first" not in fresh
    assert [result.value["tmp"] for result in results] == [fresh] * 3  # nothing of an earlier call
    assert [result.value["home"] for result in results] == [[]] * 3
    assert not any(result.value["batch_memory_writable"] for result in results)


LOCKER = '''import os


def lock(name: str) -> dict:
    """What an earlier call left in /tmp and the home, then leave folders their owner may not read nor change, /tmp
    itself too (its own under bubblewrap only: the weak tier's /tmp is the host's)."""
    seen = {"tmp": sorted(os.listdir("/tmp")), "home": sorted(os.listdir(os.path.expanduser("~")))}
    if os.environ.get("TUIAGENT_SANDBOX") != "bubblewrap":
        return seen
    for folder in (f"/tmp/{name}", os.path.expanduser(f"~/.{name}")):
        os.makedirs(f"{folder}/deeper")
        open(f"{folder}/deeper/note", "w").write("x")
        os.chmod(f"{folder}/deeper", 0o500)  # no entry of it can be removed
        os.chmod(folder, 0)  # nor listed
    os.chmod("/tmp", 0)
    return seen
'''


async def test_a_batch_empties_folders_a_call_locked_against_their_owner(project: Project) -> None:
    path = project.tool_path("locker")
    path.write_text(LOCKER)
    box = await Sandbox.start(project, warm_workers=0)
    try:
        results = await box.run(ToolBatch(tuple(ToolCall("locker", "lock", {"name": name}, str(path))
                                                for name in ("first", "second"))), READ_ONLY)
    finally:
        await box.aclose()
    assert all(result.ok for result in results), results
    if box.tier != "bubblewrap":
        return  # the weak tier has no private folders to empty
    assert results[1].value["tmp"] == results[0].value["tmp"] and "first" not in results[1].value["tmp"]
    assert results[1].value["home"] == [] == results[0].value["home"]


async def test_a_daemon_started_by_a_run_dies_with_the_run(project: Project) -> None:
    tag = f"leftover-daemon-{time.time_ns()}"
    code = ("import subprocess\nsubprocess.Popen(['/bin/sh', '-c', 'sleep 300; : " + tag + "'], start_new_session=True,\n"
            "    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n'spawned'")
    box = await Sandbox.start(project, warm_workers=0)
    try:
        result = await box.run(Snippet(code), READ_ONLY)
    finally:
        await box.aclose()
    assert result.ok and result.value == "spawned", result
    assert not [pid for pid in Path("/proc").iterdir() if pid.name.isdigit() and _cmdline_has(pid, tag)]


def _cmdline_has(pid: Path, tag: str) -> bool:
    try:
        return tag.encode() in (pid / "cmdline").read_bytes()
    except OSError:
        return False


async def test_cancel_and_timeout_kill_a_run_and_the_sandbox_serves_on(project: Project) -> None:
    box = await Sandbox.start(project, warm_workers=1)
    try:
        slow = asyncio.create_task(box.run(Snippet("import time\ntime.sleep(30)"), READ_ONLY))
        await asyncio.sleep(1.0)
        await box.cancel_running()
        cancelled = await asyncio.wait_for(slow, 10)
        timed_out = await box.run(Snippet("while True:\n    pass"), SandboxPolicy(timeout_s=1.0, project_writable=False))
        after = await box.run(Snippet("6 * 7"), READ_ONLY)
    finally:
        await box.aclose()
    assert cancelled.error_kind == "cancelled", cancelled
    assert timed_out.error_kind == "timeout", timed_out
    assert after.ok and after.value == 42, after


async def test_runs_after_a_cancelled_caller_are_prompt(project: Project) -> None:
    """A run whose caller is cancelled (a task cancel, as an MCP client's notifications/cancelled does) leaves the
    sandbox able to start the next runs at once."""
    box = await Sandbox.start(project, warm_workers=0)
    try:
        slow = asyncio.ensure_future(box.run(Snippet("import time\ntime.sleep(60)"), READ_ONLY))
        await asyncio.sleep(1.0)
        slow.cancel()
        with pytest.raises(asyncio.CancelledError):
            await slow
        for run in range(8):
            started = time.perf_counter()
            result = await asyncio.wait_for(box.run(Snippet("6 * 7"), READ_ONLY), 40)
            assert result.ok and result.value == 42, result
            took = time.perf_counter() - started
            assert took < 5.0, f"run {run + 1} after the cancelled one took {took:.2f} s"  # a fresh sandbox each
    finally:
        await box.aclose()


async def test_the_pool_starts_one_read_only_worker_and_keeps_two_once_one_was_used(project: Project) -> None:
    before = children()
    box = await Sandbox.start(project, warm_workers=2)
    try:
        pool = box.dispatch.warm
        read_only, writable = box.dispatch.warm_kinds()
        assert (len(pool.waiting(read_only)), len(pool.waiting(writable))) == (1, 2)
        assert len(children() - before) == 3  # as many as before: one fork server and two warm workers
        assert (await box.run(Snippet("1"), READ_ONLY)).ok
        await until(lambda: len(pool.waiting(read_only)) == 2, "two read-only workers waiting after one was used")
        assert len(pool.waiting(writable)) == 2
    finally:
        await box.aclose()


async def test_a_prewarm_starts_the_workers_a_cold_open_will_use_and_they_are_released_once_idle(
        project: Project) -> None:
    box = await Sandbox.start(project, warm_workers=0)
    pool = box.dispatch.warm
    try:
        box.prewarm(2)
        await until(lambda: len(pool.waiting(READ_ONLY_LAUNCH)) == 2, "two read-only workers ready or booting")
        prewarmed = pool.waiting(READ_ONLY_LAUNCH)
        box.prewarm(2)  # already there: nothing more starts
        await asyncio.sleep(0.2)
        assert pool.waiting(READ_ONLY_LAUNCH) == prewarmed
        results = await asyncio.gather(*(box.run(Snippet(f"{i} * 2"), READ_ONLY) for i in range(4)))
        assert [result.value for result in results] == [0, 2, 4, 6]
        assert all(worker.process.returncode is not None for worker in prewarmed)  # the runs took them
        await until(lambda: not pool.waiting(READ_ONLY_LAUNCH), "the prewarmed kind released once idle",
                    IDLE_RELEASE_S * 10)
    finally:
        await box.aclose()


async def test_workers_the_pool_closes_in_the_background_are_gone_once_it_is_closed(project: Project) -> None:
    box = await Sandbox.start(project, warm_workers=0)
    kinds: list[tuple[Launch, ...]] = [(READ_ONLY_LAUNCH,)]
    pool = WarmPool(project.root, 1, box.dispatch.spawn, lambda: kinds[0])
    pool.prestarted = True
    try:
        await pool.fill()
        [worker] = pool.waiting(READ_ONLY_LAUNCH)
        kinds[0] = ()
        await pool.fill()  # no longer a kind kept warm: closed in the background
        await pool.aclose()
        await pool.discard_all()
        assert worker.process.returncode is not None, "a worker outlived its pool"
        assert worker.cgroup is None or not any(folder.exists() for folder in worker.cgroup.folders)
    finally:
        await pool.discard_all()
        await box.aclose()


def test_the_virtualenvs_a_spawn_looks_up_once_are_all_bound_read_only(tmp_path: Path) -> None:
    """Worker.spawn looks the project's binds up once, for its layout and its command line: the virtualenv the
    toolchain uses (at a name of its own inside the project) is bound read-only with the project's, as when the command
    line looks them up itself."""
    project = tmp_path / "project"
    for name in (".venv", "envs/uv"):
        (project / name).mkdir(parents=True)
        (project / name / "pyvenv.cfg").write_text("home = /usr/bin\n")
    toolchain = dataclasses.replace(discover(project), venv=project / "envs" / "uv")
    launch = Launch("bubblewrap", overlay=True)
    found = project_layout(project, launch)
    assert str(project / ".venv") in found and str(project / "envs" / "uv") not in found
    argv = command(project, launch, token="a", scratch=tmp_path, channel_fd=3, toolchain=toolchain, layout=found).argv
    assert argv == command(project, launch, token="a", scratch=tmp_path, channel_fd=3, toolchain=toolchain).argv
    read_only = [argv[i + 1] for i, argument in enumerate(argv) if argument == "--ro-bind"]
    assert str(project / ".venv") in read_only and str(project / "envs" / "uv") in read_only, argv
