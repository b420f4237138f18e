"""A repository whose folder holds `$`, spaces, quotes, a newline or unicode keeps its undo and its catalog commits
(GitPython expanded `ci$HOME` to another folder: every turn said "no git repository")."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import git, init_repo
from tests.test_undo_interrupted import agent_turn, service
from tui_agent.core.agent.sessions import SessionLog
from tui_agent.core.versioning.gitstore import CatalogGit

NAMES = ["ci$HOME", "ci${USER}x", "with space", "quote'and\"double", "new\nline", "ünïcødé-名前"]


@pytest.mark.parametrize("name", NAMES)
async def test_undo_and_catalog_commits_work_in_an_odd_folder(tmp_path: Path, name: str) -> None:
    repo = init_repo(tmp_path / name / "project")
    session = SessionLog(repo / ".agent" / "sessions" / "s1.jsonl", "s1")
    undo = service(repo)
    await agent_turn(undo, session, "edit", {"app.py": "print('agent')\n"})
    assert undo.last_turn_paths() == ["app.py"]
    result = await undo.undo_last(session)
    assert result.ok, result.message
    assert (repo / "app.py").read_text() == "print('hello')\n"
    tool = ".agent/tools/odd.py"
    (repo / ".agent" / "tools").mkdir(parents=True)
    (repo / tool).write_bytes(b"def odd() -> int:\n    return 1\n")
    outcome = CatalogGit(repo).commit({tool: b"def odd() -> int:\n    return 1\n"}, "tuiagent: add tool odd")
    assert outcome.committed, outcome
    assert tool in git(repo, "ls-tree", "-r", "--name-only", "HEAD")
