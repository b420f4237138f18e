"""`tuiagent tools …` and `tuiagent recipes …` on a full disk at many fill levels (the point where a write or a
commit fails moves as other parts write more or less; LEVELS says which step fails at each): each command works or
says the disk is full, a file is one whole version, a deferred change of tuiagent's own is never refused as the
person's edit, and once there is space again every deferred change is committed and nothing was lost."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.gitrepo import init_repo
from tests.mounts import fill, free, needs_mount
from tests.test_recipes_faults import DISK_FULL_WORDS, RECIPE, RECIPE_V2, TOOL, disk, no_model, tuiagent

pytestmark = needs_mount
__all__ = ["disk", "no_model"]  # fixtures, used by name

TOOL_V2 = TOOL.replace("return 2 * x", "return x + x")
# Bytes left free at each level. What fails at a level was read from the commands' output; for tools it moves by a
# step between runs with what earlier levels left behind, so every tools level is kept but 16384, where, as at 0,
# nothing at all can be written. For recipes the steps held still over runs; levels failing nothing new were dropped
# (16384 as 0; 73728, 81920 and 90112, where every command succeeds).
LEVELS = {
    "tools": (0, 49152, 57344, 61440, 65536, 73728, 81920, 90112),  # seen: state.db kept in memory; file write,
    # git commit (file put back), write-tree/commit-tree/index/ref update deferred; a stale deferred change dropped;
    # a deferred change caught up; a commit made whose index entries could not be updated; everything succeeding
    "recipes": (
        0,  # nothing can be written: state.db kept in memory, the revert's write and the prune refused
        49152,  # the revert's and the prune's git commit fail, nothing changed
        57344,  # the commits are deferred (commit-tree, update-index)
        61440,  # the revert's ref update fails (deferred)
        65536,  # the restore's ref update fails (deferred); revert and prune commit
    ),
}


@pytest.mark.timeout(900)
@pytest.mark.parametrize("kind", ["tools", "recipes"])
def test_commands_on_a_full_disk_at_many_levels(disk: Path, capsys: pytest.CaptureFixture[str], kind: str) -> None:
    repo = init_repo(disk / "project")
    tool = repo / ".agent" / "tools" / "double.py"
    tool.parent.mkdir(parents=True)
    tool.write_text(TOOL)
    name, file, versions = ("double", tool, (TOOL, TOOL_V2)) if kind == "tools" else (
        "lines", repo / ".agent" / "recipes" / "lines.toml", (RECIPE, RECIPE_V2))
    file.parent.mkdir(parents=True, exist_ok=True)
    for version in versions:
        file.write_text(version)
        assert tuiagent(repo, capsys, kind, "list")[0] == 0
    for leave in LEVELS[kind]:
        fill(disk, leave)
        for verb in ("list", "revert", "prune", "restore"):
            code, out, err = tuiagent(repo, capsys, kind, verb, *([] if verb == "list" else [name]))
            assert "made outside tuiagent" not in out + err, (leave, verb, err)
            if code != 0:
                assert any(words in out + err for words in DISK_FULL_WORDS), (leave, verb, out, err)
            if file.exists():
                assert file.read_text() in versions, "a file is one whole version"
            assert [path.name for path in file.parent.iterdir() if path.name.endswith(".tmp")] == [], (leave, verb)
        free(disk)
        fsck = subprocess.run(["git", "fsck", "--no-dangling"], cwd=repo, capture_output=True, text=True)
        assert fsck.returncode == 0, fsck.stdout + fsck.stderr
        if not file.exists():
            assert tuiagent(repo, capsys, kind, "restore", name)[0] == 0
        code, out, err = tuiagent(repo, capsys, kind, "list")
        assert code == 0 and name in out, (leave, out, err)
        status = subprocess.run(["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True).stdout
        assert status == "", (leave, status)
