"""Host-side reads and writes under the project go through core/projectfs: committed links in `.agent/` state and
links leading out of the project are refused with a message naming them; what they point at is never touched."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.gitrepo import git
from tui_agent.core import projectfs
from tui_agent.core.agent.sessions import SessionLog
from tui_agent.core.catalog.files import atomic_write, read_bytes_or_none
from tui_agent.core.catalog.statefile import open_state_db
from tui_agent.core.events import Notice
from tui_agent.core.project import Project

BASHRC = "export PS1='$ '\n"


def commit_link(repo: Path, rel: str, target: Path) -> None:
    link = repo / rel
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    git(repo, "add", "-f", rel)
    git(repo, "commit", "-qm", f"add {rel}")


async def test_run_python_line_is_not_appended_through_a_committed_audit_link(repo: Path, tmp_path: Path) -> None:
    bashrc = tmp_path / "bashrc"
    bashrc.write_text(BASHRC)
    today = datetime.now(timezone.utc).strftime("%Y-%m-%d")
    commit_link(repo, f".agent/runs/{today}.jsonl", bashrc)
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("run_python", {"code": "print('$(touch /tmp/pwned)')\n21 * 2"})), reply(text("done")))
        async with agent_runtime(repo, api, sandbox_tier="rlimits") as runtime:
            events = await run_turn(runtime, "compute")
    assert bashrc.read_text() == BASHRC
    told = [event.message for event in events if isinstance(event, Notice)]
    assert any(f".agent/runs/{today}.jsonl is a symbolic link (to {bashrc})" in note for note in told), told
    assert (repo / ".agent" / "runs" / f"{today}.jsonl").is_symlink()


def test_state_db_as_an_outside_or_dangling_link_is_refused_and_nothing_is_lost(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.db"
    outside.write_bytes(b"precious")
    project = Project.at(repo)
    project.agent_dir.mkdir()
    for target in (outside, tmp_path / "missing.db"):
        project.state_db.unlink(missing_ok=True)
        project.state_db.symlink_to(target)
        notices: list[str] = []
        db = open_state_db(project.state_db, "CREATE TABLE IF NOT EXISTS t (x INTEGER);", notices)
        db.execute("INSERT INTO t VALUES (1)")  # works, in memory
        db.close()
        assert len(notices) == 1 and f".agent/state.db is a symbolic link (to {target})" in notices[0], notices
        assert "\n" not in notices[0]
    assert outside.read_bytes() == b"precious" and not (tmp_path / "missing.db").exists()
    assert not list(tmp_path.glob("*.db-*"))  # no WAL or journal beside the target either
    with pytest.raises(sqlite3.DatabaseError):
        sqlite3.connect(outside).execute("SELECT * FROM t")


def test_session_and_cache_writes_refuse_links_in_agent_state(repo: Path, tmp_path: Path) -> None:
    project = Project.at(repo)
    outside = tmp_path / "outside"
    outside.mkdir()
    project.agent_dir.mkdir()
    project.sessions_dir.symlink_to(outside)
    log = SessionLog.create(project, model="m")
    log.append({"type": "message", "message": {"role": "user", "content": "hi"}})
    problems = log.take_problems()
    assert list(outside.iterdir()) == []
    assert problems and ".agent/sessions is a symbolic link" in problems[0][0], problems
    log.path = project.agent_dir / "elsewhere.jsonl"  # what waited in memory is written once the file can be
    log.close()
    assert b'"hi"' in (project.agent_dir / "elsewhere.jsonl").read_bytes()

    secret = tmp_path / "secret.txt"
    secret.write_text("canary-secret")
    cache = project.cache_dir / "run-versions"
    cache.mkdir(parents=True)
    (cache / "tool.py").symlink_to(secret)
    with pytest.raises(projectfs.LinkRefused, match=r"\.agent/cache/run-versions/tool\.py is a symbolic link"):
        atomic_write(cache / "tool.py", b"overwritten")
    with pytest.raises(projectfs.LinkRefused):
        read_bytes_or_none(cache / "tool.py")
    assert secret.read_text() == "canary-secret"


SETTINGS_TOOL = '''
DEPENDS_ON = ["data/*"]


def setting(key: str) -> str:
    """Read one setting.

    Args:
        key: the setting's name
    """
    return open("data/settings.ini").read()
'''


def test_drift_never_reads_a_committed_link_to_a_secret(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.gitrepo import init_repo
    from tui_agent.cli import main

    secret = tmp_path / "id_key"
    secret.write_text("CANARY-SECRET-KEY\n")
    repo = init_repo(tmp_path / "repo")
    (repo / "data").mkdir()
    (repo / "data" / "settings.ini").write_text("mode=fast\n")
    (repo / ".agent" / "tools").mkdir(parents=True)
    (repo / ".agent" / "tools" / "setting.py").write_text(SETTINGS_TOOL)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a tool and its data")
    (repo / "data" / "settings.ini").unlink()
    commit_link(repo, "data/settings.ini", secret)
    outputs = []
    for argv in (["tools", "drift"], ["tools", "drift", "setting", "--json"], ["tools", "list"]):
        main(["--project", str(repo), *argv])
        out, err = capsys.readouterr()
        outputs.append(out + err)
    assert not any("CANARY" in output for output in outputs), outputs
    assert f"data/settings.ini is a symbolic link (to {secret})" in outputs[0], outputs[0]
    assert secret.read_text() == "CANARY-SECRET-KEY\n"


async def test_file_tools_refuse_links_out_of_the_project_and_any_link_in_agent_state(repo: Path, tmp_path: Path) -> None:
    from tui_agent.core.agent.file_tools import read_file, write_file
    from tui_agent.core.agent.permissions import Permissions, approve_all
    from tui_agent.core.agent.toolbase import ToolContext, ToolFailure

    secret = tmp_path / "secret.txt"
    secret.write_text("canary-secret\n")
    commit_link(repo, "data/settings.ini", secret)
    commit_link(repo, ".agent/notes.md", repo / "README.md")  # inside the project, but through .agent/
    commit_link(repo, "docs/readme", repo / "README.md")  # a user's link inside the project: followed
    ctx = ToolContext(Project.at(repo), Permissions("auto", approve_all), call_id="c1", tool_name="read_file")
    with pytest.raises(ToolFailure, match=r"data/settings\.ini.*outside the project.*secret\.txt"):
        await read_file(ctx, {"path": "data/settings.ini"})
    with pytest.raises(ToolFailure, match=r"\.agent/notes\.md is a symbolic link .*never follows links in \.agent/"):
        await read_file(ctx, {"path": ".agent/notes.md"})
    with pytest.raises(ToolFailure, match=r"\.agent/notes\.md is a symbolic link"):
        await write_file(ctx, {"path": ".agent/notes.md", "content": "pwned"})
    assert (await read_file(ctx, {"path": "docs/readme"})).text == (await read_file(ctx, {"path": "README.md"})).text
    assert secret.read_text() == "canary-secret\n" and "pwned" not in (repo / "README.md").read_text()


async def test_always_allow_never_writes_through_a_committed_local_config_link(repo: Path, tmp_path: Path) -> None:
    from tui_agent.core.agent.permissions import ApprovalAnswer, ApprovalRequest, Permissions

    bashrc = tmp_path / "bashrc"
    bashrc.write_text("# my shell settings\n")  # valid TOML too: it would be rewritten through the link
    commit_link(repo, ".agent/config.local.toml", bashrc)

    async def always(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer(True, "run_shell(pytest:*)", "project")

    permissions = Permissions("ask", always, project=Project.at(repo))
    decision = await permissions.check(ApprovalRequest("shell", "run_shell", "run pytest", "pytest -q", subject="pytest -q"))
    assert bashrc.read_text() == "# my shell settings\n"
    assert decision.allowed and f".agent/config.local.toml is a symbolic link (to {bashrc})" in decision.note, decision.note


def test_a_tool_file_that_is_a_link_is_broken_and_named_never_read(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    from tests.gitrepo import init_repo
    from tui_agent.cli import main

    secret = tmp_path / "secret.py"
    secret.write_text('def evil(x: int) -> int:\n    """CANARY docstring."""\n    return x\n')
    repo = init_repo(tmp_path / "repo")
    commit_link(repo, ".agent/tools/evil.py", secret)
    for argv in (["trust", "--show"], ["tools", "list"], ["tools", "show", "evil"], ["tools", "diff", "evil"]):
        main(["--project", str(repo), *argv])
        out, err = capsys.readouterr()
        assert "CANARY" not in out + err, (argv, out, err)
        assert argv[1] == "diff" or ".agent/tools/evil.py is a symbolic link" in out + err, (argv, out, err)


def test_projectfs_refuses_links_and_dotdot_anywhere_on_the_way(repo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (repo / ".agent").symlink_to(outside)  # the state folder itself
    with pytest.raises(projectfs.LinkRefused, match=r"refused: \.agent is a symbolic link .*never writes through"):
        projectfs.append(repo / ".agent" / "runs" / "x.jsonl", b"line\n")
    with pytest.raises(projectfs.LinkRefused, match=r"refused: \.agent is a symbolic link .*never reads through"):
        projectfs.read_bytes(repo / ".agent" / "config.toml")
    assert list(outside.iterdir()) == []
    (repo / ".agent").unlink()
    (repo / ".agent" / "cache").mkdir(parents=True)
    with pytest.raises(projectfs.LinkRefused, match=r"leads through '\.\.'"):
        projectfs.write_atomic(repo / ".agent" / "cache" / ".." / ".." / ".." / "escape.txt", b"x")
    with pytest.raises(projectfs.LinkRefused, match=r"leads out of the project"):
        projectfs.beneath(repo, Path("../outside/secret"))
    (repo / ".agent" / "cache" / "dangling").symlink_to(tmp_path / "nowhere")
    with pytest.raises(projectfs.LinkRefused, match=r"\.agent/cache/dangling is a symbolic link"):
        projectfs.write_atomic(repo / ".agent" / "cache" / "dangling", b"x")
    assert not (tmp_path / "nowhere").exists() and not (tmp_path / "escape.txt").exists()
    projectfs.write_atomic(repo / ".agent" / "cache" / "new" / "file", b"ok")  # folders made on the way
    assert projectfs.read_bytes(repo / ".agent" / "cache" / "new" / "file") == b"ok"


def test_an_instruction_file_linked_out_of_the_project_is_said_not_skipped(repo: Path, tmp_path: Path,
                                                                          api: FakeMessagesAPI,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    import json

    from tui_agent.cli import main

    secret = tmp_path / "notes.md"
    secret.write_text("CANARY instructions\n")
    commit_link(repo, "AGENTS.md", secret)
    api.enqueue(reply(text("hello")))
    assert main(["--project", str(repo), "-p", "hi", "--output-format", "json"]) == 0
    warnings = json.loads(capsys.readouterr().out)["warnings"]
    assert any(w.startswith("AGENTS.md is not given to the model as instructions: refused:") and str(secret) in w
               for w in warnings), warnings
    assert "CANARY" not in json.dumps(api.requests[0].body)


def test_the_commit_journal_and_locks_refuse_links_in_agent_cache(repo: Path, tmp_path: Path) -> None:
    from tui_agent.core.versioning.gitpending import PendingJournal, exclusive_lock
    from tui_agent.core.versioning.writelock import WriterLock

    secret = tmp_path / "secret.json"
    secret.write_text('{"canary": true}')
    cache = repo / ".agent" / "cache"
    cache.mkdir(parents=True)
    (cache / "pending.json").symlink_to(secret)
    (cache / "gitstore.lock").symlink_to(tmp_path / "created-by-lock")
    (cache / "writer.lock").symlink_to(tmp_path / "created-by-writer")
    journal = PendingJournal(cache / "pending.json")
    with pytest.raises(projectfs.LinkRefused, match=r"\.agent/cache/pending\.json is a symbolic link"):
        journal.load()
    with pytest.raises(projectfs.LinkRefused, match=r"\.agent/cache/gitstore\.lock is a symbolic link"):
        with exclusive_lock(cache / "gitstore.lock", timeout_s=1):
            pass
    with pytest.raises(projectfs.LinkRefused, match=r"\.agent/cache/writer\.lock is a symbolic link"):
        with WriterLock(repo).held():
            pass
    assert secret.read_text() == '{"canary": true}' and (cache / "pending.json").is_symlink()
    assert not (tmp_path / "created-by-lock").exists() and not (tmp_path / "created-by-writer").exists()


def test_a_linked_config_is_not_read_its_defaults_apply_and_it_is_said(repo: Path, tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from tui_agent.cli import main

    outside = tmp_path / "config.toml"
    outside.write_text('[permissions]\nmode = "auto"\nallow = ["run_shell"]\n')
    commit_link(repo, ".agent/config.toml", outside)
    settings = Project.at(repo).load_settings()
    assert settings.permission_mode != "auto" and settings.allow_rules == ()
    assert settings.warnings and f".agent/config.toml is a symbolic link (to {outside})" in settings.warnings[0]
    assert main(["--project", str(repo), "config"]) == 0
    assert ".agent/config.toml is a symbolic link" in capsys.readouterr().err
