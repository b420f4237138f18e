"""A batch's fan-out (fanout.call_each) on its own (a plain process, no sandbox): each call in a forked child that
starts clean, answers, times out or dies on its own; what it leaves behind is killed before the next call."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

FANOUT = Path(__file__).resolve().parent.parent / "tui_agent" / "core" / "sandbox" / "fanout.py"

SCRIPT = r"""
import importlib.util, json, os, signal, sys, time
spec = importlib.util.spec_from_file_location("fanout", sys.argv[1])
fanout = importlib.util.module_from_spec(spec); spec.loader.exec_module(fanout)
guard_spec = importlib.util.spec_from_file_location("guard", sys.argv[2])
guard = importlib.util.module_from_spec(guard_spec); guard_spec.loader.exec_module(guard)
guard.become_subreaper()

def run(kind):
    if kind == "signals":  # what the batch process set up to hear its children exit is not inherited
        return [signal.getsignal(signal.SIGCHLD) == signal.SIG_DFL, signal.set_wakeup_fd(-1)]
    if kind == "daemon":  # a grandchild in its own session, holding no pipe of the call (as subprocess starts one)
        if os.fork() == 0:
            os.setsid()
            devnull = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(devnull, fd)
            os.closerange(3, 4096)
            time.sleep(300)
            os._exit(0)
        return "started"
    if kind == "exits":
        os._exit(5)
    if kind == "hangs":
        time.sleep(300)
    if kind == "loud":  # more than a call keeps: its start and its end are kept, as a shell command's are
        sys.stdout.write("BEGIN" + "x" * 200_000 + "END")
        sys.stdout.flush()
    return kind

left = []
kill_descendants = guard.kill_descendants
def between():  # the fan-out kills what each call left behind: count it first
    left.append(len(guard.descendants(os.getpid())))
    kill_descendants()
guard.kill_descendants = between

started = time.perf_counter()
answers = fanout.call_each(["signals", "daemon", "exits", "hangs", "plain", "loud"],
                           lambda kind: {"ok": True, "value": run(kind), "value_is_repr": False}, guard=guard,
                           timeout_s=1.0, scratch=[])
print(json.dumps({"answers": answers, "left": left, "after": len(guard.descendants(os.getpid())),
                  "sigchld_restored": signal.getsignal(signal.SIGCHLD) == signal.SIG_DFL,
                  "seconds": time.perf_counter() - started}))
"""


def test_each_call_gets_a_clean_child_and_leaves_nothing_behind() -> None:
    guard = FANOUT.with_name("worker_guard.py")
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(FANOUT), str(guard)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    signals, daemon, exits, hangs, plain, loud = report["answers"]
    assert signals["ok"] and signals["value"] == [True, -1]
    assert daemon["ok"] and daemon["value"] == "started"
    assert not exits["ok"] and exits["exit_code"] == 5 and exits["error_kind"] == "sandbox"
    assert not hangs["ok"] and hangs["error_kind"] == "timeout"
    assert plain["ok"] and plain["value"] == "plain" and plain["stdout"] == ""
    assert loud["ok"] and loud["stdout"].startswith("BEGINxxx") and loud["stdout"].endswith("xxxEND")
    assert "bytes of stdout cut here (200008 bytes in all)" in loud["stdout"] and len(loud["stdout"]) < 70_000
    assert report["left"] == [0, 1, 0, 0, 0, 0]  # the daemon was still there after its call, and killed before the next
    assert report["after"] == 0 and report["sigchld_restored"]
    assert daemon["duration_ms"] < 900  # its exit is heard at once (under the 1 s timeout), with no wait for the daemon


NESTED = r"""
import importlib.util, json, os, sys
loaded = []
for name, path in (("fanout", sys.argv[1]), ("guard", sys.argv[2])):
    spec = importlib.util.spec_from_file_location(name, path)
    loaded.append(importlib.util.module_from_spec(spec)); spec.loader.exec_module(loaded[-1])
fanout, guard = loaded

def run(kind):
    if kind == "nested":  # its own answer, written past json's recursion limit on the pipe the answer goes on
        [fd] = [int(fd) for fd in os.listdir("/proc/self/fd") if int(fd) > 2 and os.path.exists(f"/proc/self/fd/{fd}")
                and os.readlink(f"/proc/self/fd/{fd}").startswith("pipe:")]
        os.write(fd, b"[" * 200_000)
        os._exit(0)
    return {"ok": True, "value": kind, "value_is_repr": False}

print(json.dumps(fanout.call_each(["nested", "honest"], run, guard=guard, timeout_s=10.0, scratch=[])))
"""


def test_a_call_whose_answer_is_nested_past_the_recursion_limit_fails_alone() -> None:
    done = subprocess.run([sys.executable, "-c", NESTED, str(FANOUT), str(FANOUT.with_name("worker_guard.py"))],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    nested, honest = json.loads(done.stdout)
    assert not nested["ok"] and nested["error_kind"] == "sandbox"
    assert honest["ok"] and honest["value"] == "honest"


FOLDERS = r"""
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("fanout", sys.argv[1])
fanout = importlib.util.module_from_spec(spec); spec.loader.exec_module(fanout)
print(json.dumps(fanout.private_folders(sys.argv[2:])))
"""


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap makes the mounts")
def test_a_private_folder_a_later_mount_covers_is_never_wiped(tmp_path: Path) -> None:
    """A tmpfs folder the project (or any bind mount) was then mounted over is that mount now: emptying it would
    delete the project's files (a project at /root, hidden behind a tmpfs then bound over it)."""
    covered, plain, project = tmp_path / "covered", tmp_path / "plain", tmp_path / "project"
    for folder in (covered, plain, project):
        folder.mkdir()
    done = subprocess.run(["bwrap", "--dev-bind", "/", "/", "--tmpfs", str(covered), "--bind", str(project),
                           str(covered), "--tmpfs", str(plain), "--setenv", "TUIAGENT_SANDBOX", "bubblewrap",
                           sys.executable, "-c", FOLDERS, str(FANOUT), str(covered), str(plain)],
                          capture_output=True, text=True, timeout=60)
    if done.returncode != 0 and "bwrap:" in done.stderr:
        pytest.skip(f"bubblewrap is not usable here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == [str(plain)]
