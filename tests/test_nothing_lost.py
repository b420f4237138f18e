"""Nothing of the user's is lost: hooks that reformat or add trailers, failed commits, uncommitted edits, deferred prunes, hand-deleted recipes."""

from __future__ import annotations

import stat
from pathlib import Path

from tests.gitrepo import git, make_user_changes, user_state
from tui_agent.core.versioning.gitstore import CatalogGit

TOOL_A = ".agent/tools/tool_a.py"
A = b"def tool_a() -> int:\n    return 1\n"


def put(root: Path, path: str, content: bytes) -> None:
    file = root / path
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_bytes(content)


def hook(repo: Path, name: str, body: str) -> None:
    path = repo / ".git" / "hooks" / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def test_a_pre_commit_hook_that_reformats_and_adds_agent_files_leaves_the_index_consistent(repo: Path) -> None:
    hook(repo, "pre-commit", f"sed -i 's/return 1/return  1  # formatted/' {TOOL_A}\ngit add {TOOL_A}\n")
    make_user_changes(repo)
    before = user_state(repo)
    put(repo, TOOL_A, A)
    assert CatalogGit(repo).commit({TOOL_A: A}, "tuiagent: add tool tool_a").committed
    committed = git(repo, "show", f"HEAD:{TOOL_A}")
    assert "# formatted" in committed
    assert git(repo, "diff", "--cached", "--name-only", "--", ".agent").strip() == ""  # index == HEAD for .agent/
    assert git(repo, "diff", "--name-only", "--", ".agent").strip() == ""  # and == the reformatted file
    assert user_state(repo) == before


def test_a_commit_msg_hook_trailer_lands_on_its_own_line(repo: Path) -> None:
    hook(repo, "commit-msg", 'echo "Signed-off-by: Dev <dev@example.com>" >> "$1"\n')
    put(repo, TOOL_A, A)
    assert CatalogGit(repo).commit({TOOL_A: A}, "tuiagent: add tool tool_a").committed
    lines = git(repo, "log", "-1", "--format=%B").splitlines()
    assert lines[0] == "tuiagent: add tool tool_a" and "Signed-off-by: Dev <dev@example.com>" in lines
