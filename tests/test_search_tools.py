"""grep and list_files with ripgrep's semantics, through rg and through the pathspec fallback (both on every test)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tui_agent.core.agent.permissions import Permissions, approve_all
from tui_agent.core.agent.search_tools import grep, list_files
from tui_agent.core.agent.toolbase import ToolContext, ToolFailure
from tui_agent.core.project import Project

ENGINES = ["rg", "fallback"] if shutil.which("rg") else ["fallback"]


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "fallback":
        monkeypatch.setenv("TUIAGENT_SEARCH", "fallback")
    else:
        monkeypatch.delenv("TUIAGENT_SEARCH", raising=False)
    return str(request.param)


def write(root: Path, name: str, text: str, mtime: float | None = None) -> None:
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    if mtime is not None:
        os.utime(path, (mtime, mtime))


@pytest.fixture
def project(repo: Path) -> Path:
    write(repo, ".gitignore", "node_modules/\nbuild/\n*.log\n!keep.log\n")
    write(repo, "src/models.py", "class Model:\n    def model_validate(self):\n        return 1\n", 1_000_000)
    write(repo, "src/util.py", "import os\n\ndef helper():\n    # TODO tidy\n    return os.sep\n", 2_000_000)
    write(repo, "src/web/app.ts", "export function modelValidate() {}\n", 3_000_000)
    write(repo, "docs/guide.md", "Call Model.model_validate to check.\n", 500_000)
    write(repo, "node_modules/lib/index.js", "function model_validate() {}\n")
    write(repo, "build/out.py", "def model_validate(): pass\n")
    write(repo, "debug.log", "model_validate failed\n")
    write(repo, "keep.log", "model_validate kept\n")
    write(repo, "vendor/.ignore", "generated.py\n")
    write(repo, "vendor/generated.py", "model_validate = None\n")
    write(repo, "vendor/real.py", "x = 1\n")
    # tuiagent's own bookkeeping: never shown; its tools and recipes: searchable
    write(repo, ".agent/sessions/s1.jsonl", '{"tool": "grep", "pattern": "def model_validate"}\n')
    write(repo, ".agent/runs/2026-01-01.jsonl", "def model_validate\n")
    write(repo, ".agent/cache/x.json", "def model_validate\n")
    write(repo, ".agent/state.db-journal", "def model_validate\n")
    write(repo, ".agent/tools/find_validate.py", '"""Find model_validate."""\n')
    write(repo, ".agent/recipes/check.toml", 'prompt = "run model_validate"\n')
    return repo


def ctx(root: Path) -> ToolContext:
    return ToolContext(Project.at(root), Permissions("ask", approve_all), call_id="c1", tool_name="grep")


async def test_grep_honours_ignore_files_and_hides_agent_state(project: Path, engine: str) -> None:
    out = (await grep(ctx(project), {"pattern": "model_validate", "output_mode": "files_with_matches"})).text.splitlines()
    assert sorted(out) == [".agent/recipes/check.toml", ".agent/tools/find_validate.py", "docs/guide.md", "keep.log", "src/models.py"]


async def test_grep_content_lines_are_sorted_by_path_with_line_numbers(project: Path, engine: str) -> None:
    out = (await grep(ctx(project), {"pattern": r"def \w+", "path": "src"})).text
    assert out.splitlines() == ["src/models.py:2:     def model_validate(self):", "src/util.py:3: def helper():"]


async def test_grep_glob_type_and_case(project: Path, engine: str) -> None:
    found = await grep(ctx(project), {"pattern": "modelvalidate|model_validate", "-i": True, "glob": "*.{ts,md}", "output_mode": "files_with_matches"})
    assert sorted(found.text.splitlines()) == ["docs/guide.md", "src/web/app.ts"]
    typed = await grep(ctx(project), {"pattern": "model", "-i": True, "type": "py", "output_mode": "files_with_matches"})
    assert typed.text.splitlines() == [".agent/tools/find_validate.py", "src/models.py"]  # .agent/tools is newest
    anchored = await grep(ctx(project), {"pattern": ".", "glob": "src/*.py", "output_mode": "files_with_matches"})
    assert anchored.text.splitlines() == ["src/util.py", "src/models.py"]  # newest first; src/web/ not crossed
    excluded = await grep(ctx(project), {"pattern": "model_validate", "glob": "!src/**", "output_mode": "files_with_matches"})
    assert "src/models.py" not in excluded.text and "docs/guide.md" in excluded.text
    with pytest.raises(ToolFailure, match="unknown file type"):
        await grep(ctx(project), {"pattern": "x", "type": "nosuchtype"})


async def test_grep_context_count_head_limit_and_multiline(project: Path, engine: str) -> None:
    around = (await grep(ctx(project), {"pattern": "TODO", "-C": 1})).text.splitlines()
    assert around == ["src/util.py-3- def helper():", "src/util.py:4:     # TODO tidy", "src/util.py-5-     return os.sep"]
    two = (await grep(ctx(project), {"pattern": "return|Model", "path": "src", "-A": 0, "-B": 1})).text.splitlines()
    assert two == ["src/models.py:1: class Model:", "src/models.py-2-     def model_validate(self):",
                   "src/models.py:3:         return 1", "--", "src/util.py-4-     # TODO tidy", "src/util.py:5:     return os.sep"]
    counts = (await grep(ctx(project), {"pattern": "o", "path": "src", "glob": "*.py", "output_mode": "count"})).text.splitlines()
    assert counts == ["src/models.py:2", "src/util.py:2", "[4 matching lines in 2 files]"]
    limited = await grep(ctx(project), {"pattern": "o", "path": "src", "head_limit": 2})
    assert len(limited.text.splitlines()) == 3 and "more lines not shown" in limited.text and limited.truncated
    spanning = (await grep(ctx(project), {"pattern": r"helper\(\):.*TODO", "multiline": True})).text.splitlines()
    assert spanning == ["src/util.py:3: def helper():", "src/util.py:4:     # TODO tidy"]
    assert (await grep(ctx(project), {"pattern": r"helper\(\):.*TODO"})).text.startswith("no match")


async def test_grep_refuses_bookkeeping_paths_and_bad_regex(project: Path, engine: str) -> None:
    for path in (".agent/sessions", ".agent/sessions/s1.jsonl", ".agent/runs", ".git", ".agent/state.db-journal"):
        with pytest.raises(ToolFailure, match="bookkeeping"):
            await grep(ctx(project), {"pattern": "x", "path": path})
    assert "find_validate" in (await grep(ctx(project), {"pattern": "Find", "path": ".agent"})).text
    with pytest.raises(ToolFailure):
        await grep(ctx(project), {"pattern": "(unclosed"})


async def test_grep_searches_an_explicit_ignored_file_like_rg(project: Path, engine: str) -> None:
    out = await grep(ctx(project), {"pattern": "model_validate", "path": "debug.log"})
    assert out.text == "debug.log:1: model_validate failed"
    inside = await grep(ctx(project), {"pattern": "model_validate", "path": "node_modules"})  # asked for: searched
    assert inside.text == "node_modules/lib/index.js:1: function model_validate() {}"
    assert (await list_files(ctx(project), {"pattern": "*.js", "path": "node_modules"})).text == "node_modules/lib/index.js"
    # as in rg, a glob naming an ignored file overrides its file-level rule; an ignored folder is still not entered
    named = await grep(ctx(project), {"pattern": "model_validate", "glob": "*.py", "output_mode": "files_with_matches"})
    assert "vendor/generated.py" in named.text and "build/out.py" not in named.text


async def test_list_files_newest_first_ignored_and_state_left_out(project: Path, engine: str) -> None:
    listed = (await list_files(ctx(project), {"pattern": "**/*.py"})).text.splitlines()
    assert listed.index("src/util.py") == listed.index("src/models.py") - 1 == len(listed) - 2  # the two oldest, newer first
    assert "build/out.py" not in listed and "node_modules/lib/index.js" not in listed  # ignored folders are not entered
    assert "vendor/generated.py" not in listed  # the pattern filters: it never brings an ignored file back
    assert ".agent/tools/find_validate.py" in listed
    everything = (await list_files(ctx(project), {"pattern": "*"})).text
    assert ".agent/sessions" not in everything and ".agent/runs" not in everything and ".agent/state.db" not in everything
    assert ".git/" not in everything and "keep.log" in everything and "debug.log" not in everything
    under = (await list_files(ctx(project), {"pattern": "*.py", "path": "src"})).text.splitlines()
    assert under == ["src/util.py", "src/models.py"]
    with pytest.raises(ToolFailure):
        await list_files(ctx(project), {"pattern": "../*"})


@pytest.fixture
def outside_links(repo: Path, tmp_path: Path) -> Path:
    """Links a repository can commit, leading out of the project: an ignore file, a file and a folder."""
    secrets = tmp_path / "outside"
    write(secrets, "rules", "pinned.txt\n")  # read as ignore rules, it would hide pinned.txt
    write(secrets, "id_key", "model_validate SECRET KEY\n")
    write(secrets, "keys/more", "model_validate SECRET IN FOLDER\n")
    write(repo, "sub/pinned.txt", "model_validate pinned\n")
    (repo / "sub" / ".ignore").symlink_to(secrets / "rules")
    (repo / "id_key").symlink_to(secrets / "id_key")
    (repo / "keys").symlink_to(secrets / "keys")
    return repo


async def test_the_fallback_never_reads_an_ignore_file_linked_out_of_the_project(
        outside_links: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TUIAGENT_SEARCH", "fallback")
    out = await grep(ctx(outside_links), {"pattern": "model_validate", "output_mode": "files_with_matches"})
    assert out.text.splitlines()[0] == "sub/pinned.txt"  # the linked rules were not read: nothing hid the file
    assert out.text.splitlines()[1].startswith("[refused: sub/.ignore is a symbolic link")


async def test_grep_and_list_files_never_read_through_a_link_leading_out(outside_links: Path, engine: str) -> None:
    out = await grep(ctx(outside_links), {"pattern": "SECRET"})
    assert "KEY" not in out.text and "FOLDER" not in out.text
    listed = (await list_files(ctx(outside_links), {"pattern": "*"})).text
    assert "id_key" not in listed and "keys/" not in listed


@pytest.mark.parametrize("name", [".gitignore", ".ignore", ".rgignore"])
async def test_an_ignore_file_linked_out_of_the_project_is_never_read_and_is_named(
        repo: Path, tmp_path: Path, engine: str, name: str) -> None:
    """The outside file's rules would hide sub/pinned.txt: with either engine it is listed and found, and the
    answer names the link it did not follow."""
    write(tmp_path / "outside", "rules", "pinned.txt\n")
    write(repo, "sub/pinned.txt", "model_validate pinned\n")
    (repo / "sub" / name).symlink_to(tmp_path / "outside" / "rules")
    out = await grep(ctx(repo), {"pattern": "model_validate", "output_mode": "files_with_matches"})
    assert out.text.splitlines()[0] == "sub/pinned.txt"
    assert f"sub/{name} is a symbolic link (to {tmp_path}/outside/rules)" in out.text and "not read" in out.text
    listed = (await list_files(ctx(repo), {"pattern": "*.txt"})).text
    assert listed.splitlines()[0] == "sub/pinned.txt" and f"sub/{name} is a symbolic link" in listed
    root_link = repo / ".ignore"
    root_link.symlink_to(tmp_path / "outside" / "rules")  # at the root, searching a subfolder: still read by rg
    out = await grep(ctx(repo), {"pattern": "model_validate", "path": "sub", "output_mode": "files_with_matches"})
    assert out.text.splitlines()[0] == "sub/pinned.txt" and ".ignore is a symbolic link" in out.text


async def test_a_linked_ignore_file_inside_the_project_is_followed(repo: Path, engine: str) -> None:
    write(repo, "rules/shared", "hidden.txt\n")
    write(repo, "sub/hidden.txt", "model_validate hidden\n")
    write(repo, "sub/seen.txt", "model_validate seen\n")
    (repo / "sub" / ".ignore").symlink_to("../rules/shared")
    out = await grep(ctx(repo), {"pattern": "model_validate", "output_mode": "files_with_matches"})
    assert out.text.splitlines() == ["sub/seen.txt"]
