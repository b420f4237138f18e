"""/undo and git-ignored files (issue 23): what a turn's sandbox runs changed in a virtualenv or build output is put
back when that is safe (a created file removed, a changed or removed one restored from its kept bytes), and every
other change is listed as not undone with its reason, a planted .pth always named. Real sandbox runs, both tiers."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.gitrepo import with_ignored_venv
from tui_agent.cli import main

TIERS = ["bubblewrap", "rlimits"]
BIG = 300 * 1024  # over the 256 KiB whose bytes are kept before a run
CHANGE_ALL = ("import pathlib, glob\n"
              "site = glob.glob('.venv/lib/python3*/site-packages')[0]\n"
              "pathlib.Path(site, 'evil.pth').write_text('import os; os.system(\"echo pwned\")\\n')\n"
              "pathlib.Path('build/out.txt').write_text('rebuilt by the agent\\n')\n"
              "pathlib.Path('build/new.bin').write_bytes(b'new')\n"
              "pathlib.Path('build/old.txt').unlink()\n"
              "pathlib.Path('build/big.dat').write_bytes(b'y' * 10)\n")


def project(repo: Path) -> Path:
    """A git-ignored .venv and build/ with three files in it; the script the agent runs; the venv's site folder."""
    site = with_ignored_venv(repo, "change_all.py", CHANGE_ALL)
    (repo / "build").mkdir()
    (repo / "build" / "out.txt").write_text("built by the person\n")
    (repo / "build" / "old.txt").write_text("old output\n")
    (repo / "build" / "big.dat").write_bytes(b"x" * BIG)
    return site


def change_all_turn(api: FakeMessagesAPI, tier: str) -> None:
    args: dict[str, object] = {"command": "python change_all.py"}
    if tier == "bubblewrap":  # the venv is read-only in a writable run unless the call says it changes it
        args["changes_venv"] = True
    api.enqueue(reply(tool_use("run_shell", args)), reply(text("done")))


@pytest.mark.parametrize("tier", TIERS)
async def test_undo_removes_a_planted_pth_and_puts_build_output_back(repo: Path, api: FakeMessagesAPI, tier: str) -> None:
    site = project(repo)
    async with agent_runtime(repo, api, sandbox_tier=tier) as runtime:
        change_all_turn(api, tier)
        await run_turn(runtime, "rebuild")
        assert (site / "evil.pth").exists() and not (repo / "build" / "old.txt").exists()
        turn = runtime.core.undo.turns(runtime.core.session)[-1]
        assert {(r.path.split("/")[-1], r.change) for r in turn.ignored} >= {
            ("evil.pth", "created"), ("out.txt", "changed"), ("new.bin", "created"), ("old.txt", "removed"),
            ("big.dat", "changed")}
        result = await runtime.core.undo.undo_last(runtime.core.session)
    assert result.ok, result.message
    assert not (site / "evil.pth").exists()
    assert (repo / "build" / "out.txt").read_text() == "built by the person\n"
    assert (repo / "build" / "old.txt").read_text() == "old output\n"
    assert not (repo / "build" / "new.bin").exists()
    pth = (site / "evil.pth").relative_to(repo).as_posix()
    assert set(result.ignored_restored) == {pth, "build/out.txt", "build/old.txt", "build/new.bin"}
    # the big file's bytes were not kept: it stays as the run left it, and the person is told why
    assert (repo / "build" / "big.dat").read_bytes() == b"y" * 10
    assert [(item.path, item.change) for item in result.ignored_not_undone] == [("build/big.dat", "changed")]
    assert "larger than 256 KiB" in result.ignored_not_undone[0].reason
    assert "Git-ignored files NOT undone: build/big.dat" in result.message and pth in result.message
    assert "the user undid your changes" in result.note_for_model and "build/big.dat" in result.note_for_model


async def test_a_planted_pth_changed_again_after_the_run_is_named_as_not_undone(repo: Path, api: FakeMessagesAPI) -> None:
    site = project(repo)
    async with agent_runtime(repo, api, sandbox_tier="rlimits") as runtime:
        change_all_turn(api, "rlimits")
        await run_turn(runtime, "rebuild")
        (site / "evil.pth").write_text("# the person edited it since\n")
        (repo / "build" / "out.txt").write_text("the person rebuilt it since\n")
        result = await runtime.core.undo.undo_last(runtime.core.session)
    assert result.ok, result.message
    assert (site / "evil.pth").read_text() == "# the person edited it since\n"
    assert (repo / "build" / "out.txt").read_text() == "the person rebuilt it since\n"
    left = {item.path.split("/")[-1]: item for item in result.ignored_not_undone}
    assert left["evil.pth"].startup and left["evil.pth"].reason == "it was changed again after the run"
    assert not left["out.txt"].startup and left["out.txt"].change == "changed"
    assert "a Python start-up file" in result.message and "evil.pth" in result.message
    assert not (repo / "build" / "new.bin").exists()  # the rest is still taken back


def test_headless_undo_json_lists_ignored_files(repo: Path, api: FakeMessagesAPI, capsys: pytest.CaptureFixture[str]) -> None:
    site = project(repo)
    change_all_turn(api, "rlimits")
    assert main(["--project", str(repo), "-p", "rebuild", "--yes", "--sandbox-tier", "rlimits"]) == 0
    assert (site / "evil.pth").exists()
    capsys.readouterr()
    assert main(["--project", str(repo), "--undo", "--output-format", "json", "--sandbox-tier", "rlimits"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["ok"] is True and not (site / "evil.pth").exists()
    assert (site / "evil.pth").relative_to(repo).as_posix() in result["ignored_restored"]
    assert result["ignored_not_undone"] == [{"path": "build/big.dat", "change": "changed", "startup_file": False,
                                             "reason": result["ignored_not_undone"][0]["reason"]}]
    assert "larger than 256 KiB" in result["ignored_not_undone"][0]["reason"]


async def test_a_turns_journal_cannot_make_undo_write_outside_the_project(repo: Path, api: FakeMessagesAPI,
                                                                          tmp_path: Path) -> None:
    """The session file is hostile input: a forged ignored record naming a path outside is listed, never touched."""
    outside = tmp_path / "outside.txt"
    outside.write_text("keep me\n")
    async with agent_runtime(repo, api) as runtime:
        api.enqueue(reply(tool_use("write_file", {"path": "a.txt", "content": "a\n"})), reply(text("ok")))
        await run_turn(runtime, "write")
        lines = runtime.core.session.path.read_text().splitlines()
        index = next(i for i, line in enumerate(lines) if '"checkpoint_end"' in line)
        end = json.loads(lines[index])
        stamp = outside.lstat()
        end["ignored"] = [{"path": str(outside), "change": "created", "after": [stamp.st_size, stamp.st_mtime_ns,
                                                                                 stamp.st_ctime_ns]},
                          {"path": "../outside.txt", "change": "created", "after": None}]
        lines[index] = json.dumps(end)
        runtime.core.session.path.write_text("\n".join(lines) + "\n")
        result = await runtime.core.undo.undo_last(runtime.core.session)
    assert result.ok, result.message
    assert outside.read_text() == "keep me\n"
    assert {item.path for item in result.ignored_not_undone} == {str(outside), "../outside.txt"}


async def test_the_tui_asks_naming_the_planted_pth_then_lists_what_was_not_undone(repo: Path, api: FakeMessagesAPI) -> None:
    from tests.test_ui_turn import send
    from tests.ui_support import SIZE, make_app, ready, turn_answered, wait_until
    from tui_agent.ui.screens.confirm import ConfirmScreen

    site = project(repo)
    (repo / ".agent").mkdir(exist_ok=True)
    (repo / ".agent" / "config.toml").write_text('[permissions]\nallow = ["run_shell"]\n')
    change_all_turn(api, "rlimits")
    app = make_app(repo, sandbox_tier="rlimits")
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "rebuild")
        await wait_until(pilot, lambda: turn_answered(app, "done"), timeout=60, message="the turn")
        assert (site / "evil.pth").exists()
        await send(pilot, app, "/undo")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen), timeout=30, message="the question")
        question = str(app.screen.question)
        assert "Files git ignores that its runs changed: 5" in question and "evil.pth" in question
        await pilot.press("y")
        await wait_until(pilot, lambda: not (site / "evil.pth").exists(), timeout=30, message="the undo")
        await wait_until(pilot, lambda: any(entry.kind == "notice" and "NOT undone: build/big.dat" in entry.text
                                            for entry in app.conversation.entries), timeout=30, message="the notice")
    assert (repo / "build" / "out.txt").read_text() == "built by the person\n"


def test_keeping_bytes_never_follows_a_link_nor_blocks_on_a_fifo(repo: Path, tmp_path: Path) -> None:
    """Agent code may have planted these in an ignored folder before: the next run's `keep` must not hang on a FIFO
    nor read a file outside the project through a symlink."""
    import os

    from tui_agent.core.sandbox import ignored

    (repo / ".gitignore").write_text("build/\n")
    (repo / "build").mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("outside\n")
    os.mkfifo(repo / "build" / "pipe")
    (repo / "build" / "link").symlink_to(secret)
    (repo / "build" / "plain.txt").write_text("plain\n")
    sizes = {f"build/{name}": os.lstat(repo / "build" / name).st_size for name in ("pipe", "link", "plain.txt")}
    assert ignored.keep(repo, sizes, []) == {"build/plain.txt": b"plain\n"}
