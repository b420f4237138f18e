"""The authoring pipeline end to end: real git repos, the real sandbox, bad files, revert/prune/restore, usage."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.catalog_support import files_in, head, opened_catalog, started_sandbox, subjects, tool_source
from tests.gitrepo import git, user_state
from tui_agent.core.catalog.api import Catalog
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.catalog.toolfile import MAX_TOOL_BYTES
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox


@pytest.fixture
async def sandbox(dirty_repo: Path) -> AsyncIterator[Sandbox]:
    async with started_sandbox(dirty_repo) as box:
        yield box


@pytest.fixture
async def catalog(dirty_repo: Path, sandbox: Sandbox) -> AsyncIterator[Catalog]:
    async with opened_catalog(dirty_repo, sandbox, inspect_timeout_s=4, test_timeout_s=1) as cat:
        yield cat


async def test_create_call_and_usage(dirty_repo: Path, catalog: Catalog) -> None:
    before = user_state(dirty_repo)
    events = []
    catalog.add_listener(events.append)
    record = (await catalog.save("double", tool_source("double", test="assert double(2) == 4"))).record
    assert record.status == "unused" and record.commit == head(dirty_repo)
    assert record.spec is not None and record.spec.to_api()["input_schema"]["required"] == ["x"]
    assert [t.name for t in record.spec.tests] == ["test_double"]
    assert subjects(dirty_repo)[0] == "tuiagent: add tool double"
    assert set(files_in(dirty_repo)) >= {".agent/tools/double.py", ".agent/.gitignore"}
    assert user_state(dirty_repo) == before
    assert events[-1].names == ("double",)

    result = await catalog.call_tool("double", {"x": 21})
    assert result.ok and result.value == 42
    with pytest.raises(PipelineError) as info:  # checked against the schema: nothing runs
        await catalog.call_tool("double", {"x": None})
    assert info.value.stage == "arguments" and "must be an integer, not null" in info.value.message
    await catalog.save("boom", tool_source("boom", "raise ValueError('boom')"))
    failing = await catalog.call_tool("boom", {"x": 1})  # valid arguments, a failing run
    assert not failing.ok and "boom" in (failing.error or "")
    record = catalog.get("double")
    assert record is not None
    assert (record.status, record.calls, record.failures) == ("ok", 1, 0)
    broken_runs = catalog.get("boom")
    assert broken_runs is not None and (broken_runs.calls, broken_runs.failures) == (1, 1)
    await catalog.prune("boom")
    assert record.last_used is not None and record.mean_ms is not None
    with pytest.raises(PipelineError) as info:
        await catalog.call_tool("double", {"y": 1})
    assert info.value.stage == "arguments"
    with pytest.raises(PipelineError) as info:
        await catalog.call_tool("nope", {})
    assert info.value.stage == "missing"
    assert [s.name for s in catalog.search("double number")] == ["double"]
    assert catalog.search("zebra") == []


BAD_FILES = [
    ("syntax", "def syntax(x: int) -> int:\n    '''Doc.'''\n    return (x\n", "parse", 3),
    ("nofunc", "def other(x: int) -> int:\n    '''Doc.'''\n    return x\n", "parse", None),
    ("nodoc", "import os\n\ndef nodoc(x: int) -> int:\n    return x\n", "parse", 3),
    ("badtype", "def badtype(x: set[int]) -> int:\n    '''Doc.'''\n    return 1\n", "schema", 1),
    ("noannot", "def noannot(x) -> int:\n    '''Doc.'''\n    return 1\n", "schema", 1),
    ("read_file", tool_source("read_file"), "name", None),
    ("big", tool_source("big") + "#" * MAX_TOOL_BYTES, "read", None),
    ("latin", "# caf\xe9\n" + tool_source("latin"), "read", 1),
    ("importfails", "import os\nimport no_such_module_xyz\n" + tool_source("importfails"), "inspect", 2),
    ("raises", "x = 1\nraise ValueError('top-level boom')\n" + tool_source("raises"), "inspect", 2),
    ("hangs", "while True:\n    pass\n" + tool_source("hangs"), "inspect", None),
    ("failing", tool_source("failing", test="assert failing(2) == 5"), "tests", 12),
    ("slowtest", tool_source("slowtest", test="import time; time.sleep(30)"), "tests", 12),
    ("tamper", "import sys\nsys.modules['tui_agent.core.catalog.inspector'].build_schema = "
               "lambda f, n: {'name': n, 'description': 5, 'input_schema': {}}\n" + tool_source("tamper"), "inspect", None),
]


async def test_bad_files_never_enter_the_catalog(dirty_repo: Path, catalog: Catalog) -> None:
    await catalog.save("keeper", tool_source("keeper"))
    before_state, before_head = user_state(dirty_repo), head(dirty_repo)
    tools_before = sorted(p.name for p in catalog.project.tools_dir.iterdir())
    messages = {}
    for name, source, stage, line in BAD_FILES:
        data = source.encode("latin-1") if name == "latin" else source
        with pytest.raises(PipelineError) as info:
            if isinstance(data, bytes):
                await catalog.pipeline.save(name, data, "x")
            else:
                await catalog.save(name, data)
        assert (info.value.stage, info.value.line) == (stage, line), (name, info.value.to_dict())
        assert catalog.get(name) is None
        messages[name] = info.value.message
    assert "did not finish within 4 s" in messages["hangs"]
    assert "timed out after 1 s" in messages["slowtest"]
    assert "no_such_module_xyz" in messages["importfails"] and "top-level boom" in messages["raises"]
    assert "malformed" in messages["tamper"]
    assert "'x'" in messages["badtype"] and "set" in messages["badtype"]
    assert "built-in" in messages["read_file"] and "256 KB" in messages["big"] and "UTF-8" in messages["latin"]
    assert sorted(p.name for p in catalog.project.tools_dir.iterdir()) == tools_before
    assert head(dirty_repo) == before_head
    assert user_state(dirty_repo) == before_state
    assert [r.name for r in catalog.tools()] == ["keeper"]


async def test_failed_update_keeps_previous_version(dirty_repo: Path, catalog: Catalog) -> None:
    await catalog.save("double", tool_source("double"))
    path = catalog.project.tool_path("double")
    good, before_head = path.read_bytes(), head(dirty_repo)
    with pytest.raises(PipelineError) as info:
        await catalog.save("double", tool_source("double", "return oops(x)", test="assert double(1) == 2"))
    assert info.value.stage == "tests" and "NameError" in info.value.message
    assert path.read_bytes() == good and head(dirty_repo) == before_head
    assert (await catalog.call_tool("double", {"x": 3})).value == 6


async def test_revert_prune_restore_are_new_commits(dirty_repo: Path, catalog: Catalog) -> None:
    before = user_state(dirty_repo)
    await catalog.save("double", tool_source("double"))
    first = head(dirty_repo)
    await catalog.save("double", tool_source("double", "return x + x + 0"))
    assert subjects(dirty_repo)[0] == "tuiagent: update tool double"
    assert "+    return x + x + 0" in catalog.diff("double")

    record = (await catalog.revert("double")).record
    assert subjects(dirty_repo)[0] == f"tuiagent: revert tool double to {first[:8]}"
    assert catalog.project.tool_path("double").read_text() == tool_source("double")
    assert record.commit == head(dirty_repo)

    await catalog.prune("double")
    assert subjects(dirty_repo)[0] == "tuiagent: prune tool double"
    assert not catalog.project.tool_path("double").exists() and catalog.get("double") is None
    assert ".agent/tools/double.py" not in files_in(dirty_repo)

    await catalog.restore("double")
    assert subjects(dirty_repo)[0].startswith("tuiagent: restore tool double")
    assert (await catalog.call_tool("double", {"x": 2})).value == 4
    history = catalog.history("double")
    assert [h.message.split(" tool")[0] for h in history] == ["tuiagent: restore", "tuiagent: prune", "tuiagent: revert",
                                                              "tuiagent: update", "tuiagent: add"]
    assert history[1].deleted
    assert user_state(dirty_repo) == before
    with pytest.raises(PipelineError):
        await catalog.restore("double")
    with pytest.raises(PipelineError):
        await catalog.prune("ghost")


async def test_startup_validates_caches_and_catches_up(dirty_repo: Path, sandbox: Sandbox) -> None:
    project = Project.at(dirty_repo)
    first = await Catalog.open(project, sandbox)
    await first.save("double", tool_source("double"))
    await first.aclose()
    # edited while tuiagent was not running: a valid new tool, and a broken edit of a committed one
    project.tool_path("triple").write_text(tool_source("triple", "return 3 * x"))
    committed = head(dirty_repo)
    project.tool_path("double").write_text("def double(:\n")
    before = user_state(dirty_repo)

    second = await Catalog.open(project, sandbox)
    report = second.load_report
    assert report.validated == ["triple"] and report.broken == ["double"] and report.caught_up == ["triple"]
    assert subjects(dirty_repo)[0].startswith("tuiagent: catch up tool triple")
    assert head(dirty_repo) != committed and ".agent/tools/triple.py" in files_in(dirty_repo)
    broken = second.get("double")
    assert broken is not None and broken.status == "broken" and broken.error is not None
    assert broken.error.stage == "parse" and broken.error.line == 1
    assert (await second.call_tool("double", {"x": 5})).value == 10  # the committed version stays live
    assert user_state(dirty_repo) == before
    await second.aclose()

    third = await Catalog.open(project, sandbox)
    assert third.load_report.cached == ["triple"] and third.load_report.broken == ["double"]
    await third.aclose()

    for leftover in project.agent_dir.glob("state.db*"):  # as in a fresh clone: no local state
        leftover.unlink()
    fourth = await Catalog.open(project, sandbox)
    assert fourth.load_report.validated == ["triple"] and fourth.load_report.caught_up == []
    assert fourth.registry.get("triple").commit == git(dirty_repo, "log", "-1", "--format=%H", "--", ".agent/tools/triple.py").strip()
    await fourth.aclose()


async def test_detached_head_defers_then_catches_up(repo: Path, sandbox: Sandbox) -> None:
    catalog = await Catalog.open(Project.at(repo), sandbox)
    git(repo, "checkout", "-q", "--detach")
    before = head(repo)
    reasons = []
    catalog.add_listener(lambda event: reasons.append(event.reason))
    record = (await catalog.save("double", tool_source("double"))).record
    assert head(repo) == before and record.status == "unused"
    assert "deferred" in reasons[-1] and "detached" in reasons[-1]
    assert (await catalog.call_tool("double", {"x": 1})).value == 2
    git(repo, "checkout", "-q", "main")
    await catalog.save("triple", tool_source("triple", "return 3 * x"))
    assert "catching up" in subjects(repo)[0]
    assert {".agent/tools/double.py", ".agent/tools/triple.py"} <= set(files_in(repo))
    await catalog.aclose()


async def test_no_repository_asks_through_the_callback(tmp_path: Path) -> None:
    asked = []
    plain = tmp_path / "plain"
    plain.mkdir()
    sandbox = await Sandbox.start(Project.at(plain), warm_workers=1)
    catalog = await Catalog.open(Project.at(plain), sandbox, ask_init_git=lambda p: asked.append(p) or False)
    assert asked and not (plain / ".git").exists()
    await catalog.save("double", tool_source("double"))
    assert catalog.get("double") is not None
    await catalog.aclose()

    async def yes(project: Project) -> bool:
        return True

    catalog = await Catalog.open(Project.at(plain), sandbox, ask_init_git=yes)
    assert (plain / ".git").is_dir()
    await catalog.save("triple", tool_source("triple", "return 3 * x"))
    assert {".agent/tools/double.py", ".agent/tools/triple.py"} <= set(files_in(plain))
    await catalog.aclose()
    await sandbox.aclose()
