"""/undo and /rewind: every file a turn changed (write_file, run_shell, a WRITES tool) put back, the user's work never lost."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, cancel_once_started, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.gitrepo import git, make_user_changes, user_state
from tui_agent.cli import main
from tui_agent.core.events import TurnFinished
from tui_agent.core.runtime_state import agent_of, catalog_of

NOTE_TOOL = '''"""Write a note file."""
WRITES = True
import os


def write_note(text: str) -> str:
    """Write docs/tool_note.md.

    Args:
        text: the note
    """
    os.makedirs("docs", exist_ok=True)
    with open("docs/tool_note.md", "w", encoding="utf-8") as handle:
        handle.write(text)
    return "written"


def test_write_note() -> None:
    assert write_note.__doc__
'''

SHELL_EDITS = "printf 'shell line\\n' >> app.py && echo made > made_by_shell.txt && rm notes.txt && chmod +x run.sh"


def fingerprint(repo: Path) -> dict[str, object]:
    """Work tree bytes and modes, the raw index file, and the history (HEAD, every ref, the reflog of HEAD)."""
    index = (repo / ".git" / "index").read_bytes()
    files = {}
    for path in sorted(repo.rglob("*")):
        rel = path.relative_to(repo).as_posix()
        if rel.startswith((".git/", ".agent")) or rel == ".git":
            continue
        files[rel] = "dir" if path.is_dir() else (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mode & 0o777)
    history = git(repo, "for-each-ref", "--format=%(refname) %(objectname)") + git(repo, "rev-parse", "HEAD")
    history += git(repo, "reflog", "--format=%H %gs") + git(repo, "stash", "list")
    return {"index": index, "files": files, "history": history}


def edit_everything_script(api: FakeMessagesAPI) -> None:
    api.enqueue(
        reply(tool_use("write_file", {"path": "README.md", "content": "# rewritten by the agent\n"})),
        reply(tool_use("edit_file", {"path": "src/lib.py", "old": "VALUE = 1", "new": "VALUE = 2"})),
        reply(tool_use("run_shell", {"command": SHELL_EDITS})),
        reply(tool_use("write_note", {"text": "from a WRITES tool\n"})),
        reply(text("All edited.")),
    )


def prepare(repo: Path) -> None:
    (repo / "src").mkdir()
    (repo / "src" / "lib.py").write_text("VALUE = 1\n")
    (repo / "run.sh").write_text("echo run\n")
    git(repo, "add", "src/lib.py", "run.sh")
    git(repo, "commit", "-q", "-m", "lib")
    (repo / ".agent" / "tools").mkdir(parents=True)
    (repo / ".agent" / "tools" / "write_note.py").write_text(NOTE_TOOL)


async def test_undo_puts_back_exactly_what_the_turn_changed(repo: Path, api: FakeMessagesAPI) -> None:
    prepare(repo)
    async with agent_runtime(repo, api) as runtime:
        assert catalog_of(runtime).get("write_note") is not None
        make_user_changes(repo)  # a staged change, an unstaged change and an untracked file
        user_state(repo)  # git status may refresh the index: let it happen before the fingerprint
        before = fingerprint(repo)
        edit_everything_script(api)
        await run_turn(runtime, "edit everything")
        after_turn = fingerprint(repo)
        changed = {path for path in set(before["files"]) | set(after_turn["files"])
                   if before["files"].get(path) != after_turn["files"].get(path)}
        assert changed == {"README.md", "src/lib.py", "app.py", "made_by_shell.txt", "notes.txt", "run.sh",
                           "docs", "docs/tool_note.md"}
        diff = await runtime.core.undo.turn_diff(runtime.core.session)
        assert "+made" in diff and "-untracked notes" in diff and "+from a WRITES tool" in diff and "new mode 100755" in diff
        result = await runtime.core.undo.undo_last(runtime.core.session)
        assert result.ok, result.message
        assert fingerprint(repo) == before
        again = await runtime.core.undo.undo_last(runtime.core.session)
        assert not again.ok and "Nothing to undo" in again.message


async def test_undo_stops_and_shows_the_diff_when_the_user_changed_a_file_since(repo: Path, api: FakeMessagesAPI) -> None:
    async with agent_runtime(repo, api) as runtime:
        api.enqueue(reply(tool_use("write_file", {"path": "app.py", "content": "agent\n"})),
                    reply(tool_use("write_file", {"path": "other.py", "content": "x = 1\n"})), reply(text("ok")))
        await run_turn(runtime, "edit")
        (repo / "app.py").write_text("agent\nmy own line\n")
        result = await runtime.core.undo.undo_last(runtime.core.session)
        assert not result.ok and "app.py" in result.message
        assert "+my own line" in result.conflict_diff
        assert (repo / "app.py").read_text() == "agent\nmy own line\n" and (repo / "other.py").exists()


async def test_an_edit_made_as_soon_as_the_turn_says_it_finished_is_the_persons_not_the_turns(repo: Path, api: FakeMessagesAPI) -> None:
    async with agent_runtime(repo, api) as runtime:
        api.enqueue(reply(tool_use("write_file", {"path": "app.py", "content": "agent\n"})), reply(text("ok")))
        async for event in agent_of(runtime).run_turn("edit"):
            if isinstance(event, TurnFinished):  # a front end shows "done"; the person edits at once
                (repo / "app.py").write_text("agent\nmy own line\n")
        result = await runtime.core.undo.undo_last(runtime.core.session)
        assert not result.ok and "+my own line" in result.conflict_diff
        assert (repo / "app.py").read_text() == "agent\nmy own line\n"


async def test_rewind_undoes_a_run_of_turns_and_takes_back_authored_tools(repo: Path, api: FakeMessagesAPI) -> None:
    from tests.catalog_support import tool_source

    async with agent_runtime(repo, api) as runtime:
        head = git(repo, "rev-parse", "HEAD")
        api.enqueue(reply(tool_use("write_file", {"path": "one.txt", "content": "1\n"})), reply(text("ok")))
        await run_turn(runtime, "first")
        api.enqueue(reply(tool_use("create_tool", {"name": "shout", "source": tool_source("shout")})),
                    reply(tool_use("write_file", {"path": "one.txt", "content": "2\n"})), reply(text("ok")))
        await run_turn(runtime, "second")
        assert catalog_of(runtime).get("shout") is not None
        api.enqueue(reply(tool_use("create_tool", {"name": "shout", "source": tool_source("shout", body="return 3 * x")})),
                    reply(text("ok")))
        await run_turn(runtime, "third")
        api.enqueue(reply(text("nothing to do")))
        await run_turn(runtime, "fourth: nothing")
        turns = runtime.core.undo.turns(runtime.core.session)
        assert [turn.turn for turn in turns] == [1, 2, 3, 4] and turns[2].authored[0].created is False
        assert (await runtime.core.undo.rewind(runtime.core.session, 4)).message.startswith("Undid turn 4")
        updated = await runtime.core.undo.undo_last(runtime.core.session)  # turn 3 updated shout: back to turn 2's version
        assert updated.ok and "shout reverted" in updated.message, updated.message
        assert "return 2 * x" in (repo / ".agent" / "tools" / "shout.py").read_text()
        assert git(repo, "log", "-1", "--format=%s").startswith("tuiagent: revert tool shout")
        result = await runtime.core.undo.rewind(runtime.core.session, 1)
        assert result.ok, result.message
        assert not (repo / "one.txt").exists()
        assert catalog_of(runtime).get("shout") is None and "pruned" in result.message
        assert git(repo, "rev-parse", "HEAD") != head  # the catalog's own history records the prune
        assert [turn.undone for turn in runtime.core.undo.turns(runtime.core.session)] == [True, True, True, True]


def test_headless_undo_undoes_the_last_turn_of_the_latest_session(repo: Path, api: FakeMessagesAPI,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    api.enqueue(reply(tool_use("run_shell", {"command": "echo changed > app.py"})), reply(text("done")))
    assert main(["--project", str(repo), "-p", "change app", "--yes"]) == 0
    assert (repo / "app.py").read_text() == "changed\n"
    assert main(["--project", str(repo), "--undo"]) == 0
    assert "app.py" in capsys.readouterr().out
    assert (repo / "app.py").read_text() == "print('hello')\n"
    assert main(["--project", str(repo), "--undo"]) == 1
    assert "Nothing to undo" in capsys.readouterr().err
    session = next((repo / ".agent" / "sessions").glob("*.jsonl")).read_text()
    assert "the user undid your changes" in session  # a resumed conversation tells the model


async def test_a_cancelled_turn_is_still_undoable(repo: Path, api: FakeMessagesAPI) -> None:
    async with agent_runtime(repo, api) as runtime:
        api.enqueue(reply(tool_use("run_shell", {"command": "echo partial > half.txt && echo started && sleep 30"})),
                    reply(text("never")))
        await cancel_once_started(runtime, "start something long")
        assert runtime.core.undo.turns(runtime.core.session)[-1].after is not None
        result = await runtime.core.undo.undo_last(runtime.core.session)
        assert result.ok and not (repo / "half.txt").exists(), result.message


async def test_undo_takes_back_only_what_the_agents_calls_changed_and_keeps_the_persons_edits(repo: Path,
                                                                                          api: FakeMessagesAPI) -> None:
    """The person edits and creates files in another editor while the turn runs (between the agent's calls): undo
    puts back the agent's writes and shell changes, keeps the person's files and says so."""
    from tui_agent.core.events import ToolCallFinished

    async with agent_runtime(repo, api) as runtime:
        api.enqueue(reply(tool_use("write_file", {"path": "agent.txt", "content": "agent\n"})),
                    reply(tool_use("run_shell", {"command": "echo shell > shell.txt && printf 'x\\n' >> README.md"})),
                    reply(text("done")))
        assert agent_of(runtime) is not None
        async for event in agent_of(runtime).run_turn("write two files"):
            if isinstance(event, ToolCallFinished) and event.name == "write_file":  # the model thinks; the person types
                (repo / "mine.txt").write_text("my new file\n")
                (repo / "app.py").write_text("print('my edit')\n")
        assert (repo / "agent.txt").exists() and (repo / "shell.txt").exists()
        result = await runtime.core.undo.undo_last(runtime.core.session)
        assert result.ok, result.message
        assert not (repo / "agent.txt").exists() and not (repo / "shell.txt").exists()
        assert (repo / "README.md").read_text() == "# demo project\n"
        assert (repo / "mine.txt").read_text() == "my new file\n"  # kept
        assert (repo / "app.py").read_text() == "print('my edit')\n"  # kept
        assert result.kept == ["app.py", "mine.txt"] and "Kept as they are: app.py, mine.txt" in result.message


async def test_a_file_the_person_edits_while_a_write_waits_for_approval_is_kept(repo: Path, api: FakeMessagesAPI) -> None:
    """The approval modal is open (the write_file call has started); meanwhile the person saves another file."""

    async def approve_after_editing(request: object) -> bool:
        (repo / "app.py").write_text("print('edited while the question was open')\n")
        return True

    async with agent_runtime(repo, api, approve=approve_after_editing, permission_mode="ask") as runtime:
        api.enqueue(reply(tool_use("write_file", {"path": "agent.txt", "content": "agent\n"})), reply(text("done")))
        await run_turn(runtime, "write a file")
        assert (repo / "agent.txt").exists()
        result = await runtime.core.undo.undo_last(runtime.core.session)
        assert result.ok, result.message
        assert not (repo / "agent.txt").exists()
        assert (repo / "app.py").read_text() == "print('edited while the question was open')\n"
        assert result.kept == ["app.py"]


async def test_undo_keeps_a_tool_the_person_edited_after_the_agent_wrote_it(repo: Path, api: FakeMessagesAPI) -> None:
    from tests.catalog_support import tool_source

    async with agent_runtime(repo, api) as runtime:
        api.enqueue(reply(tool_use("create_tool", {"name": "shout", "source": tool_source("shout")})), reply(text("ok")))
        await run_turn(runtime, "make a tool")
        mine = tool_source("shout", body="return 5 * x")
        (repo / ".agent" / "tools" / "shout.py").write_text(mine)  # the person improves it in an editor
        await catalog_of(runtime).outside_edit({"shout"})
        await catalog_of(runtime).settle.flush()
        last = [turn for turn in runtime.core.undo.turns(runtime.core.session) if not turn.undone][-1:]
        assert runtime.core.undo.authored_preview(runtime.core.session, last) == [  # the /undo question says what undo does
            "tool shout (kept: changed after the agent wrote it)"]
        result = await runtime.core.undo.undo_last(runtime.core.session)
        assert result.ok, result.message
        assert "tool shout kept as it is" in result.message
        assert (repo / ".agent" / "tools" / "shout.py").read_text() == mine
        assert catalog_of(runtime).get("shout") is not None
