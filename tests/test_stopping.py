"""Every way a run stops (cancel, timeout, closing the sandbox) leaves none of its processes, by each mechanism of
`stopping.py`: the run's cgroup (`cgroup.kill`), bubblewrap's PID namespace, and the weak tier's session scan.

Each run clears its parent-death signal, starts a double-forked daemon in a new session (`setsid sleep &`), a process that ignores SIGTERM, and one
that left the process group, then hangs; after the stop none of them is alive in this host's /proc, and the run's
cgroup folders are gone. "No cgroup" machines are this one with the cgroup probe's answer set to "none available".
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy, ShellCommand, Snippet, stopping
from tui_agent.core.sandbox.launch import Launch, probe_bubblewrap

BWRAP = probe_bubblewrap() is None
KILL = stopping.kill_base() is not None
# (tier, cgroups): bubblewrap with and without cgroups (its PID namespace), the weak tier with and without
SETUPS = {
    "cgroup": ("bubblewrap", True),
    "namespace": ("bubblewrap", False),
    "rlimits-cgroup": ("rlimits", True),
    "rlimits-session": ("rlimits", False),
}
HANG = """
import ctypes, os, signal, subprocess, time
ctypes.CDLL(None).prctl(1, 0, 0, 0, 0)  # PR_SET_PDEATHSIG 0: the run's process outlives a killed bubblewrap
subprocess.run(["/bin/sh", "-c", "setsid sleep {daemon} </dev/null >/dev/null 2>&1 &"])
subprocess.Popen(["/bin/sh", "-c", "trap '' TERM; exec sleep {ignorer}"])
subprocess.Popen(["sleep", "{escaper}"], process_group=0)
time.sleep(1000)
"""
LEAVE = """
import os, subprocess, time
subprocess.run(["/bin/sh", "-c", "setsid sleep {daemon} </dev/null >/dev/null 2>&1 &"])
subprocess.Popen(["/bin/sh", "-c", "trap '' TERM; exec sleep {ignorer}"], stdout=subprocess.DEVNULL)
subprocess.Popen(["sleep", "{escaper}"], process_group=0)

def sleeping(argument):
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if open(f"/proc/{{pid}}/cmdline", "rb").read().split(b"\\0")[:2] == [b"sleep", argument.encode()]:
                return True
        except OSError:  # the process ended meanwhile
            continue
    return False

while not all(map(sleeping, ["{daemon}", "{ignorer}", "{escaper}"])):
    time.sleep(0.01)
"""
SHELL_LEAVE = """setsid sleep {daemon} </dev/null >/dev/null 2>&1 & d=$!
sh -c "trap '' TERM; exec sleep {ignorer}" </dev/null >/dev/null 2>&1 & i=$!
sleep {escaper} </dev/null >/dev/null 2>&1 & e=$!
for p in $d $i $e; do until [ "$(cat /proc/$p/comm 2>/dev/null)" = sleep ]; do sleep 0.01; done; done
echo started"""
BOMB = """
import subprocess, sys
subprocess.run([sys.executable, "-c", "import os, time\\nwhile True:\\n    try:\\n        os.fork()\\n    except OSError:\\n        time.sleep(0.01)", "{tag}"])
"""


@pytest.fixture
def project(repo: Path) -> Project:
    project = Project.at(repo)
    project.ensure_layout()
    return project


@pytest.fixture(params=list(SETUPS))
def setup(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    tier, with_cgroups = SETUPS[request.param]
    if tier == "bubblewrap" and not BWRAP:
        pytest.skip("bubblewrap does not work here")
    if with_cgroups and not KILL:
        pytest.skip("no cgroup with cgroup.kill can be made here")
    if not with_cgroups:  # this machine as one that lets tuiagent make no cgroup
        monkeypatch.setattr(stopping, "kill_base", lambda: None)
        monkeypatch.setattr(stopping, "pids_base", lambda: None)
    yield tier


def alive(argument: str) -> list[int]:
    """Live (not zombie) processes of this host whose command line has `argument`."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if argument.encode() in cmdline and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


def run_cgroups(pid: int) -> list[Path]:
    """The run cgroup folders (tuiagent-*) process `pid` is in, in every hierarchy."""
    found = []
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _id, controllers, path = line.split(":", 2)
        base = stopping.kill_base() if controllers == "" else stopping.pids_base() if "pids" in controllers.split(",") else None
        if base is not None and Path(path).name.startswith("tuiagent-"):
            found.append(base / Path(path).name)
    return found


async def wait_for(arguments: list[str], task: asyncio.Task[object]) -> dict[str, int] | None:
    """The run's processes by argument once all are alive; None when the run ended before they all were."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not task.done():
        seen = {argument: alive(argument) for argument in arguments}
        if all(seen.values()):
            return {argument: pids[0] for argument, pids in seen.items()}
        await asyncio.sleep(0.02)
    if task.done():
        return None
    raise AssertionError("the run's processes never all started: still running")


async def start_hanging_run(box: Sandbox, how: str) -> tuple[dict[str, str], asyncio.Task[Any], dict[str, int]]:
    """A run of HANG whose processes are all alive. A timeout run gets a short timeout, doubled (fresh names) while
    the timeout fires before its processes all started (a loaded machine), so the wait for it stays short."""
    for timeout_s in (1.5, 3, 6, 12, 24) if how == "timeout" else (60,):
        names = sleeps()
        policy = SandboxPolicy(timeout_s=timeout_s, processes=32)
        task = asyncio.create_task(box.run(Snippet(HANG.format(**names)), policy))
        pids = await wait_for(list(names.values()), task)
        if pids is not None:
            return names, task, pids
        result = task.result()
        assert how == "timeout" and result.error_kind == "timeout", result
    raise AssertionError("the run's processes never all started within a 24 s timeout")


def sleeps() -> dict[str, str]:
    base = 1000 + secrets.randbelow(10**6) / 10**7
    return {"daemon": f"{base:.7f}", "ignorer": f"{base + 1:.7f}", "escaper": f"{base + 2:.7f}"}


def own_run_cgroups() -> list[Path]:
    bases = {base for base in (stopping.kill_base(), stopping.pids_base()) if base is not None}
    return [folder for base in bases for folder in base.glob(f"tuiagent-{os.getpid()}-*")]


@pytest.mark.parametrize("how", ["cancel", "timeout", "close"])
async def test_a_stop_leaves_no_process_of_the_run(project: Project, setup: str, how: str) -> None:
    box = await Sandbox.start(project, tier=setup, warm_workers=1)
    closed = False
    task: asyncio.Task[Any] | None = None
    try:
        names, task, pids = await start_hanging_run(box, how)
        folders = {folder for pid in pids.values() for folder in run_cgroups(pid)}
        assert bool(folders) == (stopping.kill_base() is not None)
        if how == "cancel":
            await box.cancel_running()
            result = await task
            assert result.error_kind == "cancelled", result
        elif how == "timeout":
            result = await task
            assert result.error_kind == "timeout", result
        else:
            await box.aclose()
            closed = True
        left = {name: alive(argument) for name, argument in names.items() if alive(argument)}
        assert not left, f"left running after the {how}: {left}"
        assert not [folder for folder in folders if folder.exists()], "the run's cgroup was not removed"
    finally:
        if not closed:
            await box.aclose()
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
    assert not own_run_cgroups(), "cgroups left after the sandbox closed"


@pytest.mark.parametrize("program", ["snippet", "shell"])
async def test_a_finished_run_leaves_no_process_of_its_own(project: Project, setup: str, program: str) -> None:
    """A run that ends on its own leaves nothing running: under bubblewrap or with a cgroup the host ends it (the
    run's process neither adopts nor kills its descendants there), on the weak tier without one the run's process
    and the session scan do."""
    box = await Sandbox.start(project, tier=setup, warm_workers=1)
    names = sleeps()
    policy = SandboxPolicy(timeout_s=60, processes=32)
    try:
        if program == "snippet":
            result = await box.run(Snippet(LEAVE.format(**names)), policy)
        else:
            result = await box.run(ShellCommand(SHELL_LEAVE.format(**names), 30), policy)
            assert isinstance(result.value, dict) and result.value["stdout"] == "started\n", result
        assert result.ok, result
        left = {name: alive(argument) for name, argument in names.items() if alive(argument)}
        assert not left, f"left running after the run: {left}"
    finally:
        await box.aclose()
    assert not own_run_cgroups()


@pytest.mark.skipif(not KILL or stopping.pids_base() is None, reason="needs a pids cgroup with cgroup.kill")
@pytest.mark.parametrize("tier", ["bubblewrap", "rlimits"])
async def test_a_fork_bomb_is_capped_by_pids_max_and_gone_after_a_cancel(project: Project, tier: str) -> None:
    if tier == "bubblewrap" and not BWRAP:
        pytest.skip("bubblewrap does not work here")
    box = await Sandbox.start(project, tier=tier, warm_workers=0)
    tag = f"bomb-{secrets.token_hex(6)}"
    task = asyncio.create_task(box.run(Snippet(BOMB.format(tag=tag)), SandboxPolicy(timeout_s=60, processes=16)))
    try:
        deadline = time.monotonic() + 20
        peak = 0
        while time.monotonic() < deadline and peak < 10:
            peak = max(peak, len(alive(tag)))
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.3)
        count = len(alive(tag))
        assert 10 <= peak and count <= 16 + stopping.SANDBOX_OVERHEAD, (peak, count)  # capped by pids.max
        await box.cancel_running()
        result = await task
        assert result.error_kind == "cancelled", result
        assert not alive(tag)
    finally:
        await box.aclose()
    assert not own_run_cgroups()


@pytest.mark.skipif(not KILL, reason="needs a cgroup with cgroup.kill")
async def test_the_timeout_protection_names_cgroup_kill(project: Project) -> None:
    from tui_agent.commands.sandbox_status import describe

    box = await Sandbox.start(project, warm_workers=0)
    try:
        assert "cgroup.kill" in describe(box)["protections"]["timeout"]
    finally:
        await box.aclose()


def live_children() -> list[int]:
    """Processes of this host whose parent is this test process (zombies aside)."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            fields = Path(f"/proc/{entry}/stat").read_bytes().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == os.getpid() and fields[0] not in (b"Z", b"X"):
            found.append(int(entry))
    return found


@pytest.mark.parametrize("tier", ["bubblewrap", "rlimits"])
async def test_closing_while_workers_still_boot_leaves_nothing(project: Project, tier: str) -> None:
    if tier == "bubblewrap" and not BWRAP:
        pytest.skip("bubblewrap does not work here")
    before = set(live_children())
    box = await Sandbox.start(project, tier=tier, warm_workers=2)
    box.prewarm(4)  # more workers booting
    await box.aclose()
    assert not set(live_children()) - before
    assert not own_run_cgroups()


async def test_a_bubblewrap_worker_stopped_at_any_moment_of_its_start_leaves_nothing(
        project: Project, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a cgroup a bubblewrap worker is stopped through its PID namespace's init: a worker discarded at any
    moment of its start (an overlay worker's leader is first the shell that mounts it, whose `mount` child exits a
    moment later) leaves no process, and its discard returns (an init left running would hold bubblewrap's output
    pipes open: the wait for it would never end)."""
    if not BWRAP:
        pytest.skip("bubblewrap does not work here")
    monkeypatch.setattr(stopping, "kill_base", lambda: None)
    monkeypatch.setattr(stopping, "pids_base", lambda: None)
    box = await Sandbox.start(project, tier="bubblewrap", warm_workers=0)
    try:
        for attempt in range(120):
            launch = Launch("bubblewrap", project_writable=bool(attempt % 2), overlay=bool(attempt % 2))
            worker = await box.dispatch.spawn(launch)
            await asyncio.sleep(attempt // 2 % 10 / 1000)
            await asyncio.wait_for(worker.discard(), 30)
            assert not alive(str(project.root)), f"{launch} discarded {attempt // 2 % 10} ms into its start outlived it"
    finally:
        await box.aclose()
