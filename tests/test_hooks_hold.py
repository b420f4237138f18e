"""The hooks hold, end to end in real repositories: after agent code could write the project, the user's git hooks do not
run on tuiagent's own catalog commits until the person says so with `tuiagent tools commit`."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agent_helpers import GOOD_TOOL
from tests.gitrepo import add_hooks_running_a_script, git, make_user_changes
from tui_agent.core.agent.file_tools import edit_file, write_file
from tui_agent.core.agent.permissions import Permissions, approve_all
from tui_agent.core.agent.toolbase import ToolContext
from tui_agent.core.catalog.api import Catalog
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy
from tui_agent.core.versioning import hookhold
from tui_agent.core.sandbox import Snippet

NEW_TOOL = GOOD_TOOL.replace("count_lines", "count_rows")


def add_hook(repo: Path) -> Path:
    """A pre-commit hook running ./scripts/check.sh, which leaves a mark of each run in the git dir."""
    add_hooks_running_a_script(repo, "#!/bin/sh\necho user-script >> .git/hook-runs\n")
    return repo / ".git" / "hook-runs"


def user_status(repo: Path) -> list[str]:
    return [line for line in git(repo, "status", "--porcelain").splitlines() if ".agent/" not in line and "scripts/" not in line]


def tuiagent(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), *args],
                          capture_output=True, text=True, timeout=120, check=False)


async def write_project_from_agent_code(project: Project, code: str) -> None:
    box = await Sandbox.start(project, warm_workers=0)
    try:
        result = await box.run(Snippet(code), SandboxPolicy(timeout_s=20, project_writable=True))
        assert result.ok, result.error
    finally:
        await box.aclose()


async def save_new_tool(project: Project, source: str = NEW_TOOL) -> tuple[str | None, str | None]:
    """Save count_rows through the catalog: (its commit, why it is not committed)."""
    box = await Sandbox.start(project, warm_workers=0)
    try:
        catalog = await Catalog.open(project, box)
        try:
            record = (await catalog.save("count_rows", source)).record
            return record.commit, catalog.commit_blocker()
        finally:
            await catalog.aclose()
    finally:
        await box.aclose()


async def test_a_rewritten_hook_script_waits_for_the_person_then_their_hooks_run(repo: Path) -> None:
    runs = add_hook(repo)
    project = Project.at(repo)
    project.ensure_layout()
    make_user_changes(repo)
    status_before = user_status(repo)
    await write_project_from_agent_code(project, "open('scripts/check.sh', 'w').write('#!/bin/sh\\necho agent > owned.txt\\n')")
    assert hookhold.held(repo) is not None

    commit, why = await save_new_tool(project)
    assert commit is None and why is not None
    assert "pre-commit" in why and "tuiagent tools commit" in why and "run_python or run_shell" in why
    assert not (repo / "owned.txt").exists() and not runs.exists()
    assert "count_rows" in json.dumps(tuiagent(repo, "tools", "list", "--json").stdout)
    assert not (repo / "owned.txt").exists(), "opening the catalog again ran the hook"

    # The person looks, puts their script back, and releases: their hook runs, the held tool is committed.
    (repo / "scripts" / "check.sh").write_text("#!/bin/sh\necho user-script >> .git/hook-runs\n")
    done = tuiagent(repo, "tools", "commit", "--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["released_hold"] and "run_python or run_shell" in report["released_hold"][-1]
    assert runs.read_text().splitlines() == ["user-script"]
    assert ".agent/tools/count_rows.py" in git(repo, "show", "--name-only", "--format=", "HEAD")
    assert hookhold.held(repo) is None and report["pending"] == []
    assert user_status(repo) == status_before  # the user's staged, unstaged and untracked work as it was

    commit, why = await save_new_tool(project, NEW_TOOL.replace("Count", "Tally"))
    assert commit is not None and why is None, "without a new agent write, hooks run at once"
    assert runs.read_text().splitlines() == ["user-script", "user-script"]


async def test_without_hooks_the_hold_changes_nothing(repo: Path) -> None:
    project = Project.at(repo)
    project.ensure_layout()
    await write_project_from_agent_code(project, "open('notes.md', 'w').write('x')")
    assert hookhold.held(repo) is not None
    commit, why = await save_new_tool(project)
    assert commit is not None and why is None


async def test_read_only_runs_do_not_hold(repo: Path) -> None:
    add_hook(repo)
    project = Project.at(repo)
    project.ensure_layout()
    project.tool_path("count_lines").write_text(GOOD_TOOL)
    box = await Sandbox.start(project, warm_workers=0)
    try:
        catalog = await Catalog.open(project, box)  # validation: the tool's import and tests, project read-only
        await catalog.call_tool("count_lines", {"path": "README.md"})
        await catalog.aclose()
    finally:
        await box.aclose()
    assert hookhold.held(repo) is None


@pytest.mark.parametrize(("mode", "held"), [("auto", True), ("ask", False)])
async def test_file_writes_hold_unless_the_person_saw_the_diff(repo: Path, mode: str, held: bool) -> None:
    ctx = ToolContext(Project.at(repo), Permissions(mode, approve_all), call_id="c1", tool_name="write_file")
    await write_file(ctx, {"path": "scripts/check.sh", "content": "#!/bin/sh\necho agent\n"})
    assert (hookhold.held(repo) is not None) is held
    if held:
        assert "write_file scripts/check.sh (not reviewed)" in hookhold.held(repo).causes[-1]  # type: ignore[union-attr]
    hookhold.release(repo)
    await edit_file(ctx, {"path": "scripts/check.sh", "old": "agent", "new": "agent again"})
    assert (hookhold.held(repo) is not None) is held


@pytest.mark.parametrize("planted", ["garbage", "folder", "symlink", "wrong_types"])
def test_any_record_at_the_path_holds_and_says_it_is_unreadable(repo: Path, planted: str) -> None:
    record = repo / hookhold.HOLD_FILE
    record.parent.mkdir(parents=True)
    if planted == "garbage":
        record.write_bytes(b"\xff{not json")
    elif planted == "folder":
        record.mkdir()
    elif planted == "symlink":
        os.symlink("/etc/passwd", record)
    else:
        record.write_text(json.dumps({"causes": [1, 2]}))
    hold = hookhold.held(repo)
    assert hold is not None and hold.causes == ("an unreadable hold record",)
    if planted == "folder":
        with pytest.raises(OSError, match="is a folder"):
            hookhold.release(repo)
    else:
        assert hookhold.release(repo) is not None and hookhold.held(repo) is None


def test_causes_are_kept_short_and_few(repo: Path) -> None:
    for index in range(hookhold.MAX_CAUSES + 5):
        assert hookhold.hold(repo, f"run {index}\n\x1b[2J" + "x" * 500) is None
    hold = hookhold.held(repo)
    assert hold is not None and len(hold.causes) == hookhold.MAX_CAUSES
    assert hold.causes[-1].split(" ", 1)[1].startswith(f"run {hookhold.MAX_CAUSES + 4}")
    assert all(len(cause) <= hookhold.MAX_CAUSE_CHARS + 9 and cause.isprintable() for cause in hold.causes)


def test_tools_commit_with_nothing_waiting_says_so(repo: Path) -> None:
    done = tuiagent(repo, "tools", "commit")
    assert done.returncode == 0, done.stderr
    assert "Nothing of the catalog waits for a commit." in done.stdout


async def test_slash_commit_in_the_tui_runs_the_hooks_and_commits_what_waited(repo: Path) -> None:
    from tests.ui_support import SIZE, make_app, ready, wait_until

    runs = add_hook(repo)
    project = Project.at(repo)
    project.ensure_layout()
    await write_project_from_agent_code(project, "open('notes.md', 'w').write('agent notes')")
    project.tool_path("count_rows").write_text(NEW_TOOL)  # a tool file the catalog's next open commits: held
    head = git(repo, "rev-parse", "HEAD")
    app = make_app(repo, watch_catalog=False)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert git(repo, "rev-parse", "HEAD") == head and not runs.exists()
        app.prompt_area.insert("/commit")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("/commit:" in entry.text for entry in app.conversation.entries if entry.kind == "notice"),
                         message="the /commit notice")
        notice = next(entry for entry in app.conversation.entries if entry.kind == "notice" and "/commit:" in entry.text)
        assert "Lifted the hooks hold" in notice.text and "committed" in notice.text, notice.text
    assert runs.read_text().splitlines() == ["user-script"]
    assert ".agent/tools/count_rows.py" in git(repo, "show", "--name-only", "--format=", "HEAD")
    assert hookhold.held(repo) is None


def test_a_headless_turn_says_why_its_tool_is_not_committed_and_the_model_is_told(repo: Path, api, capsys) -> None:  # type: ignore[no-untyped-def]
    from tests.fake_messages_api import reply, text, tool_use
    from tui_agent.cli import main

    runs = add_hook(repo)
    api.enqueue(reply(tool_use("run_shell", {"command": "printf '#!/bin/sh\\necho agent > owned.txt\\n' > scripts/check.sh"})),
                reply(tool_use("create_tool", {"name": "count_rows", "source": NEW_TOOL})),
                reply(text("done")))
    assert main(["--project", str(repo), "-p", "lint, then make a tool", "--yes"]) == 0
    err = capsys.readouterr().err
    assert "tool count_rows saved but not committed" in err and "tuiagent tools commit" in err, err
    told = json.dumps(api.requests[-1].messages[-1])
    assert "registered, not committed" in told and "pre-commit" in told
    assert not (repo / "owned.txt").exists() and not runs.exists()


RUN_UNTIL_RELEASED = """import ctypes, signal
signal.pthread_sigmask(signal.SIG_BLOCK, {{signal.SIGUSR1}})
ctypes.CDLL(None).prctl(15, b"{name}", 0, 0, 0)  # PR_SET_NAME
open('scripts/check.sh', 'w').write('#!/bin/sh\\necho agent > owned.txt\\n')
signal.sigtimedwait({{signal.SIGUSR1}}, 10)  # until released, at most 10 s
"""


def processes_named(name: str) -> list[int]:
    """Processes of this host whose name (/proc/PID/comm) is `name`."""
    found = []
    for entry in os.listdir("/proc"):
        try:
            if entry.isdigit() and Path(f"/proc/{entry}/comm").read_text().strip() == name:
                found.append(int(entry))
        except OSError:
            continue
    return found


async def test_the_hold_starts_with_the_run_not_after_it(repo: Path) -> None:
    """A catalog commit made while agent code is still running (another terminal's CLI) already waits."""
    import asyncio

    runs = add_hook(repo)
    project = Project.at(repo)
    project.ensure_layout()
    name = f"held-{secrets.token_hex(4)}"  # the run's process name: the test ends the run once the commit was tried
    running = asyncio.create_task(write_project_from_agent_code(project, RUN_UNTIL_RELEASED.format(name=name)))
    deadline = asyncio.get_running_loop().time() + 30
    while hookhold.held(repo) is None and not running.done():
        assert asyncio.get_running_loop().time() < deadline
        await asyncio.sleep(0.05)
    assert not running.done(), "the hold came only after the run"
    commit, why = await save_new_tool(project)
    assert not running.done(), "the commit was made after the run: this test needs a longer run"
    for pid in processes_named(name):
        os.kill(pid, signal.SIGUSR1)
    await running
    assert commit is None and why is not None and "tuiagent tools commit" in why, why
    assert not (repo / "owned.txt").exists() and not runs.exists()


def test_concurrent_holds_lose_no_cause(tmp_path: Path) -> None:
    """Four processes recording holds at once (two runs, a TUI and a -p): every cause stays in the record."""
    code = ("import sys\nfrom pathlib import Path\nfrom tui_agent.core.versioning import hookhold\n"
            "for n in range(5):\n    assert hookhold.hold(Path(sys.argv[1]), f'writer {sys.argv[2]} run {n}') is None\n")
    writers = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path), str(w)]) for w in range(4)]
    assert all(writer.wait(timeout=60) == 0 for writer in writers)
    causes = json.loads((tmp_path / hookhold.HOLD_FILE).read_text())["causes"]
    assert sorted(cause.split(" ", 1)[1] for cause in causes) == sorted(
        f"writer {w} run {n}" for w in range(4) for n in range(5))
