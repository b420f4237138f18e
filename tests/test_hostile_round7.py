"""Round 7 red team: attacks on what changed in the session of issue 33's one sandbox (the shell started with
posix_spawn, one judgment of what a run leaves for both paths and the quarantine's copies, a batch's wipe of its
private folders, the warm pool's layout check, the protected names, the run's limits). Each runs for
real (bubblewrap, real git repositories, the person's own git afterwards) and is checked by its effect on the host.
Contained attacks stay as regression tests; holes are strict xfails naming what lets them through."""

from __future__ import annotations

import ctypes
import os
import shutil
import stat
import subprocess
import tempfile
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.gitrepo import init_repo
from tests.sandbox_helpers import bubblewrap_sandbox
from tests.test_hostile_round5 import BARE_LAYOUT, host_git
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy, ShellCommand, Snippet, ToolBatch, ToolCall
from tui_agent.core.sandbox.launch import probe_bubblewrap
from tui_agent.core.sandbox.protected import CHANGE_SLACK_NS, LowerState

WRITABLE = SandboxPolicy(timeout_s=60, project_writable=True)


@pytest.fixture
async def box(repo: Path) -> AsyncIterator[Sandbox]:
    async with bubblewrap_sandbox(repo) as sandbox:
        yield sandbox


@pytest.fixture
async def plain_box(repo: Path) -> AsyncIterator[Sandbox]:
    """A bubblewrap sandbox whose writable runs go without an overlay (the path of kernels that refuse one)."""
    async with bubblewrap_sandbox(repo, overlay=False) as sandbox:
        yield sandbox


async def shell(box: Sandbox, command: str, policy: SandboxPolicy = WRITABLE) -> dict[str, object]:
    result = await box.run(ShellCommand(command, policy.timeout_s), policy)
    assert result.ok and isinstance(result.value, dict), result
    return result.value


# --- A shell command and its worker (worker.run_shell: posix_spawn, BASH_ENV from a pipe) ------------------------------

REACH_WORKER = r'''
import ctypes, json, os, sys
forged = (json.dumps({"ok": True, "value": {"exit_code": 0, "stdout": "forged", "stderr": ""}}) + "\n").encode()
reached = []
for pid in [name for name in os.listdir("/proc") if name.isdigit() and int(name) != os.getpid()]:
    for fd in os.listdir(f"/proc/{pid}/fd") if os.access(f"/proc/{pid}/fd", os.R_OK) else []:
        try:  # a pipe opens through /proc; the worker's channel (a socket) must not
            kind = os.readlink(f"/proc/{pid}/fd/{fd}")
            with open(f"/proc/{pid}/fd/{fd}", "wb", buffering=0) as handle:
                handle.write(forged)
            reached.append(kind)
        except OSError:
            pass
libc = ctypes.CDLL(None, use_errno=True)
pidfd = libc.syscall(434, 1, 0)  # pidfd_open(the sandbox's first process), then pidfd_getfd of each descriptor
taken = [fd for fd in range(3, 64) if pidfd >= 0 and libc.syscall(438, pidfd, fd, 0) >= 0]
print("SOCKETS", [kind for kind in reached if kind.startswith("socket:")], "TAKEN", taken, flush=True)
os._exit(7)
'''


async def test_a_shell_command_cannot_answer_for_its_worker(box: Sandbox, repo: Path) -> None:
    """The command opens every descriptor of every process it sees through /proc (and tries pidfd_getfd) to write a
    forged answer: the worker's channel is a socket, which /proc does not open, and pidfd_open is refused; the
    result is the command's own exit status."""
    (repo / "reach.py").write_text(REACH_WORKER)
    report = await shell(box, "python3 reach.py; echo status $? >&2; exit 5", SandboxPolicy(timeout_s=20))
    assert report["exit_code"] == 5, report
    assert "SOCKETS [] TAKEN []" in str(report["stdout"]), report
    assert "status 7" in str(report["stderr"])


async def test_the_shell_gets_no_descriptor_of_the_worker_but_its_streams_and_pipeline_pipe(box: Sandbox) -> None:
    """The startup pipe is closed by the startup file itself; what is left is stdin, stdout, stderr and the pipe
    the exit statuses of the last pipeline go back on (a command may write it: it only lies about itself)."""
    report = await shell(box, "ls -l /proc/self/fd/ | tail -n +2", SandboxPolicy(timeout_s=20))
    kinds = sorted(line.split("->")[1].strip().split(":")[0] for line in str(report["stdout"]).splitlines()
                   if "->" in line and not line.split("->")[1].strip().startswith("/proc/"))
    assert kinds == ["/dev/null", "pipe", "pipe", "pipe"], report  # ls's stdout is the pipe to tail


# --- A batch's calls and what they leave each other (fanout.call_each) --------------------------------------------------

LEAVE_TOOL = '''
import ctypes, os

def plant():
    for path in ("/dev/shm/round7-left", "/dev/round7-left"):
        try:
            with open(path, "w") as handle:
                handle.write("from call 1")
        except OSError:
            pass
    return "planted"

def plant_ipc():  # IPC_CREAT: System V objects in the sandbox's IPC namespace
    libc = ctypes.CDLL(None, use_errno=True)
    return [libc.shmget(0x7E7, 4096, 0o1666), libc.msgget(0x7E7, 0o1666), libc.semget(0x7E7, 1, 0o1666)]

def plant_queue():
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.mq_open(b"/round7", os.O_CREAT | os.O_RDWR, 0o600, None)

def look_queue():
    return ctypes.CDLL(None, use_errno=True).mq_open(b"/round7", os.O_RDWR)

def look():
    return [path for path in ("/dev/shm/round7-left", "/dev/round7-left") if os.path.exists(path)]

def look_ipc():
    libc = ctypes.CDLL(None, use_errno=True)
    return [libc.shmget(0x7E7, 0, 0o666), libc.msgget(0x7E7, 0o666), libc.semget(0x7E7, 0, 0o666)]
'''


def leave_batch(repo: Path, *functions: str) -> ToolBatch:
    (repo / "round7_tool.py").write_text(LEAVE_TOOL)
    return ToolBatch(tuple(ToolCall("round7_tool", name, {}, module_path=str(repo / "round7_tool.py"))
                           for name in functions))


async def test_a_batch_call_leaves_no_file_in_dev_to_the_next_call(box: Sandbox, repo: Path) -> None:
    """/dev/shm (where POSIX shared memory and multiprocessing's semaphores live) and /dev itself were writable
    folders of bubblewrap's /dev tmpfs that the wipe between calls did not empty: a call left files the next call
    read (a tool poisoning another's shared memory)."""
    results = await box.run(leave_batch(repo, "plant", "look"), SandboxPolicy(timeout_s=20))
    assert results[0].value == "planted", results[0].error
    assert results[1].value == [], results[1]


async def test_a_batch_call_leaves_no_system_v_ipc_to_the_next_call(box: Sandbox, repo: Path) -> None:
    """A batch's calls share the sandbox's IPC namespace: a shared memory segment, message queue or semaphore set one
    call made outlived it, and the next call attached it (the wipe between calls emptied folders only)."""
    results = await box.run(leave_batch(repo, "plant_ipc", "look_ipc"), SandboxPolicy(timeout_s=20))
    assert isinstance(results[0].value, list) and min(results[0].value) >= 0, results[0]
    assert results[1].value == [-1, -1, -1], results[1]


async def test_a_batch_call_leaves_no_posix_message_queue_to_the_next_call(box: Sandbox, repo: Path) -> None:
    """A POSIX message queue lives in the IPC namespace too, and nothing lists them to remove (no mqueue file system
    is mounted): opening one is refused."""
    results = await box.run(leave_batch(repo, "plant_queue", "look_queue"), SandboxPolicy(timeout_s=20))
    assert [result.value for result in results] == [-1, -1], results


async def test_a_batch_in_the_weak_tier_never_removes_the_persons_system_v_ipc(repo: Path) -> None:
    """The weak tier shares the person's IPC namespace: what a batch removes between calls under bubblewrap is
    theirs there (a database's shared memory)."""
    libc = ctypes.CDLL(None, use_errno=True)
    segment = libc.shmget(0, 4096, 0o1600)  # IPC_PRIVATE: the person's own
    assert segment >= 0
    box = await Sandbox.start(Project.at(repo), tier="rlimits", warm_workers=0)
    try:
        results = await box.run(leave_batch(repo, "look", "look"), SandboxPolicy(timeout_s=20))
        assert [result.ok for result in results] == [True, True], results
        assert libc.shmctl(segment, 2, ctypes.create_string_buffer(256)) == 0  # IPC_STAT: still there
    finally:
        libc.shmctl(segment, 0, None)
        await box.aclose()


# --- The quarantine's copy of a refused folder (leftovers.copy_clean, put_clean) -----------------------------------------

@pytest.mark.parametrize("overlay", [True, False])
async def test_the_quarantine_copy_of_a_refused_folder_writes_nothing_through_a_link_it_holds(
        repo: Path, tmp_path: Path, overlay: bool) -> None:
    """A refused repository holds `.git`, a symlink to a folder of the person's, and `dot-git/`, the name the copy
    gives `.git`: copied in name order, the link came first and the folder's files were written through it (any file
    the person can write, `~/.bashrc` too) and the folder made world-writable."""
    victim = tmp_path / "victim"
    victim.mkdir(mode=0o700)
    async with bubblewrap_sandbox(repo, overlay=overlay) as sandbox:
        seen = len(sandbox.notices)
        report = await shell(sandbox, f"mkdir -p evil/objects evil/refs evil/dot-git && echo 'ref: refs/heads/main' > "
                                      f"evil/HEAD && ln -s {victim} evil/.git && echo planted > evil/dot-git/.bashrc "
                                      "&& chmod 777 evil/dot-git")
        assert report["exit_code"] == 0, report
        assert "evil: refused" in " ".join(sandbox.notices[seen:])
    assert os.listdir(victim) == []
    assert stat.S_IMODE(victim.stat().st_mode) == 0o700
    assert not (repo / "evil").exists()


async def test_no_live_repository_is_kept_in_the_quarantine_when_names_collide(
        plain_box: Sandbox, repo: Path, tmp_path: Path) -> None:
    """`x/.git` (a link, refused and copied as `x/dot-git`) then `x/dot-git/` (a repository, refused whole): its copy
    found its name taken, and the move kept the run's repository raw in the quarantine, where the person is told to
    look (their prompt's `git status` there runs its fsmonitor)."""
    canary = tmp_path / "fsmonitor-ran"
    report = await shell(plain_box, BARE_LAYOUT.format(folder="x/dot-git", canary=canary) + " && ln -s /x x/.git")
    assert report["exit_code"] == 0, report
    assert not (repo / "x" / "dot-git").exists()
    for folder in [path for path in (repo / ".agent" / "quarantine").rglob("*") if path.is_dir()]:
        host_git(folder, "status")
    assert not canary.exists()


# --- The files a hook manager obeys (protected.PROTECTED_NAMES) -------------------------------------------------------

LEFTHOOK_FILES = ("lefthook-local.yml", ".lefthook.toml", "lefthook.json", ".config/lefthook.yaml",
                  ".lefthook/pre-commit/run.sh")


@pytest.mark.parametrize("overlay", [True, False])
async def test_a_run_never_leaves_a_config_lefthook_obeys_under_any_of_its_names(
        repo: Path, overlay: bool) -> None:
    """lefthook.yml and .lefthook.yml were protected; lefthook also reads lefthook-local.yml (merged, or alone),
    .yaml, .toml, .json and .jsonc forms, each in .config/ too, and its script folders: a job there runs on the
    person's next `git commit` (and at a catalog commit once hooks run), outside the sandbox."""
    job = "pre-commit:\n  jobs:\n    - run: touch /tmp/owned\n"
    command = " && ".join(f"mkdir -p $(dirname {name}) && printf '{job}' > {name}" for name in LEFTHOOK_FILES)
    async with bubblewrap_sandbox(repo, overlay=overlay) as box:
        report = await shell(box, command)
    assert report["exit_code"] == 0, report
    assert [name for name in LEFTHOOK_FILES if (repo / name).exists()] == []


# --- A warm worker started before a protected path existed (dispatch.WarmPool.acquire, launch.project_layout) ----------

async def test_a_warm_worker_started_before_a_protected_file_existed_never_runs_a_write_to_it(repo: Path) -> None:
    """The person makes `.envrc` after a writable worker without an overlay started (no bind for it then): the next
    run must not get that worker, or it appends to `.envrc` unseen (the sweep looks only at what is created or
    replaced there; direnv then runs it on the host)."""
    if probe_bubblewrap() is not None:
        pytest.skip("bubblewrap is not usable here")
    sandbox = await Sandbox.start(Project.at(repo), tier="bubblewrap", warm_workers=1, prestart=False)
    try:
        sandbox.runs.overlay_problem = "forced off for this test"
        pool, (_read_only, writable) = sandbox.dispatch.warm, sandbox.dispatch.warm_kinds()
        pool.prestarted = True
        await pool.fill()
        assert not writable.overlay and len(pool.waiting(writable)) == 1
        (repo / ".envrc").write_text("echo mine\n")
        await shell(sandbox, "echo 'touch /tmp/owned' >> .envrc")
    finally:
        await sandbox.aclose()
    assert (repo / ".envrc").read_text() == "echo mine\n"


# --- The run's limits --------------------------------------------------------------------------------------------------

FILL_PRIVATE = """
import os
written = 0
for folder in ("/tmp", os.environ["HOME"], "/dev/shm", "/var/tmp", "/run", "/root", "/home"):
    for n in range(16):  # files of 16 MiB, each under the file size limit, until one past the limit is held
        if written > 128:
            break
        try:
            with open(f"{folder}/fill-{n}", "wb") as handle:
                handle.write(b"x" * (16 << 20))
            written += 16
        except OSError:
            break
written
"""


async def test_a_run_cannot_hold_more_memory_than_its_limit_in_its_private_folders(box: Sandbox) -> None:
    """Files in /tmp, HOME, /dev/shm or a hidden host folder are memory no rlimit counts: together they hold no more
    than the run's memory limit (/dev/shm a share of it, the other hidden folders nothing: read-only)."""
    result = await box.run(Snippet(FILL_PRIVATE), SandboxPolicy(timeout_s=30, memory_mb=128, file_size_mb=32))
    assert result.ok, result.error
    assert isinstance(result.value, int) and result.value <= 128, result.value


async def test_a_project_inside_a_read_only_hidden_folder_stays_writable() -> None:
    """The hidden folders but /tmp are remounted read-only after the project is bound inside one (a project under
    /var/tmp or a home): the project's own bind stays writable, the folder around it does not."""
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("/var/tmp is not writable here")
    folder = Path(tempfile.mkdtemp(prefix="tuiagent-hidden-", dir="/var/tmp"))
    try:
        repo = init_repo(folder / "project")
        async with bubblewrap_sandbox(repo) as sandbox:
            report = await shell(sandbox, "echo kept > made && ! touch /var/tmp/beside 2>/dev/null && touch /tmp/ok")
        assert report["exit_code"] == 0, report
        assert (repo / "made").read_text() == "kept\n"
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --- What a run without an overlay leaves (ignored.refuse_left over LowerState stamps) ----------------------------------

FLOOD = ("mkdir -p flood/deep && python3 -c 'import os\nfor n in range({count}): os.close(os.open(f\"flood/{{n}}\", "
         "os.O_CREAT | os.O_WRONLY))' && ")
PLANT = ("git init -q {where}/sub && printf '[core]\\n\\tfsmonitor = \"touch {canary}; false\"\\n' >> {where}/sub/.git/config"
         " && cp /bin/true {where}/tool && chmod 4755 {where}/tool")


async def test_a_run_without_an_overlay_has_its_nested_repository_and_setuid_file_refused(
        plain_box: Sandbox, repo: Path, tmp_path: Path) -> None:
    """The same plant as below without the flood: refused (the regression half of the hole below)."""
    canary = tmp_path / "fsmonitor-ran"
    report = await shell(plain_box, PLANT.format(where="deep", canary=canary))
    assert report["exit_code"] == 0, report
    assert_nothing_left(repo, "deep", canary)


async def test_a_run_without_an_overlay_cannot_hide_what_it_leaves_behind_a_flood_of_files(
        plain_box: Sandbox, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Seen with the real limit (100,000 files: seconds of a run); here the walk's limit is 2,000 to keep it short."""
    limit = 2_000
    monkeypatch.setattr(LowerState.take.__func__, "__defaults__", (limit, None))  # type: ignore[attr-defined]
    canary = tmp_path / "fsmonitor-ran"
    command = FLOOD.format(count=limit + 1) + PLANT.format(where="flood/deep", canary=canary)
    report = await shell(plain_box, command)
    assert report["exit_code"] == 0, report
    assert_nothing_left(repo, "flood/deep", canary)


@pytest.mark.parametrize("command", ["", "echo hi > bulk/zz/sub/notes && git -C bulk/zz/sub add notes && "])
async def test_a_persons_repository_past_the_walk_stays_when_a_run_without_an_overlay_leaves_its_config(
        plain_box: Sandbox, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    """Both walks stop before the person's nested repository (more files than the limit before it): the run's plant
    beside it is refused, their repository stays where it is, with its config, even where the run staged a file there
    (git's index, which a commit writes, as with complete walks)."""
    sub = persons_repository_past_the_walk(repo, monkeypatch)
    config = (sub / ".git" / "config").read_bytes()
    canary = tmp_path / "fsmonitor-ran"
    report = await shell(plain_box, command + PLANT.format(where="deep", canary=canary))
    assert report["exit_code"] == 0, report
    assert_nothing_left(repo, "deep", canary)
    assert any(note.startswith("deep/sub/.git: refused: a git repository") for note in plain_box.runs.notices)
    assert (sub / ".git" / "config").read_bytes() == config
    assert not command or "notes" in subprocess.run(["git", "-C", str(sub), "ls-files"], capture_output=True,
                                                    text=True, check=True).stdout


async def test_a_run_without_an_overlay_cannot_rewrite_the_config_of_a_persons_repository_past_the_walk(
        plain_box: Sandbox, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the run wrote in the `.git` of a repository the walks never reached is judged as in one they stamped."""
    sub = persons_repository_past_the_walk(repo, monkeypatch)
    canary = tmp_path / "fsmonitor-ran"
    report = await shell(plain_box, f"printf '[core]\\n\\tfsmonitor = \"touch {canary}; false\"\\n' >> "
                                    "bulk/zz/sub/.git/config")
    assert report["exit_code"] == 0, report
    host_git(sub, "status")
    assert not canary.exists()
    assert sub.is_dir() and (sub / ".git").is_dir()


async def test_a_persons_ignored_file_past_the_walk_changed_by_a_run_is_not_taken_for_one_it_created(
        plain_box: Sandbox, repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by its change time only, a file the walks never stamped may be the person's: it is not recorded as created
    (which /undo would delete)."""
    (repo / ".git" / "info" / "exclude").write_text("bulk/\n", encoding="utf-8")
    (repo / "bulk" / "zz").mkdir(parents=True)
    (repo / "bulk" / "zz" / "kept.txt").write_text("the person's\n", encoding="utf-8")
    persons_repository_past_the_walk(repo, monkeypatch)
    report = await shell(plain_box, "echo the run >> bulk/zz/kept.txt")
    assert report["exit_code"] == 0, report
    created = [change.path for change in plain_box.runs.take_ignored_changes() if change.change == "created"]
    assert "bulk/zz/kept.txt" not in created, created


def persons_repository_past_the_walk(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The person's repository `bulk/zz/sub`, beside more files than the walk's limit (2,000 here): no walk stamps it;
    returned once its change times are older than a run starting now (protected.CHANGE_SLACK_NS)."""
    limit = 2_000
    monkeypatch.setattr(LowerState.take.__func__, "__defaults__", (limit, None))  # type: ignore[attr-defined]
    sub = repo / "bulk" / "zz" / "sub"
    sub.mkdir(parents=True, exist_ok=True)
    for n in range(limit + 1):
        (repo / "bulk" / str(n)).touch()
    host_git(sub, "init", "-q")
    newest = max(os.lstat(path).st_ctime_ns for path in (sub.parent, sub, sub / ".git", sub / ".git" / "config"))
    while time.time_ns() <= newest + CHANGE_SLACK_NS:
        time.sleep(0.01)
    return sub


async def test_a_run_without_an_overlay_cannot_hide_what_it_leaves_among_files_the_project_had(
        plain_box: Sandbox, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The flood committed beforehand (here made before the run): neither walk reaches the plant among it."""
    persons_repository_past_the_walk(repo, monkeypatch)
    canary = tmp_path / "fsmonitor-ran"
    report = await shell(plain_box, PLANT.format(where="bulk/deep", canary=canary))
    assert report["exit_code"] == 0, report
    assert_nothing_left(repo, "bulk/deep", canary)


def assert_nothing_left(repo: Path, where: str, canary: Path) -> None:
    """No setuid program and no repository whose config the person's git obeys at `where`."""
    tool = repo / where / "tool"
    assert not tool.exists() or not tool.stat().st_mode & (stat.S_ISUID | stat.S_ISGID)
    if (repo / where / "sub").is_dir():
        host_git(repo / where / "sub", "status")
    assert not canary.exists()
    assert not os.path.exists(repo / where / "sub" / ".git" / "config")
