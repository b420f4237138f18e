"""Sandbox run modes: a read-only project (project_writable=False) and run_python importing given tool files."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import user_state
from tui_agent.commands.sandbox_status import describe
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy
from tui_agent.core.sandbox import Snippet

READ_ONLY = SandboxPolicy(project_writable=False)

WRITE_ATTEMPTS = '''
import errno, os
outcome = {}
for target in ("app.py", "victim.txt", "../victim.txt", ".agent/cache/x", "/tmp/scratch.txt"):
    try:
        with open(target, "w") as handle:
            handle.write("pwned")
        outcome[target] = "written"
    except OSError as exc:
        outcome[target] = errno.errorcode.get(exc.errno, str(exc.errno))
outcome["read"] = open("README.md").read()
outcome
'''


@pytest.fixture
def project(dirty_repo: Path) -> Project:
    proj = Project.at(dirty_repo)
    proj.ensure_layout()
    return proj


async def test_read_only_runs_cannot_write_the_project_under_bubblewrap(project: Project, dirty_repo: Path) -> None:
    before = user_state(dirty_repo)
    box = await Sandbox.start(project, tier="bubblewrap", warm_workers=1)
    try:
        result = await box.run(Snippet(WRITE_ATTEMPTS), READ_ONLY)
        again = await box.run(Snippet(WRITE_ATTEMPTS), READ_ONLY)  # from the read-only warm pool now
        assert result.ok, result.error
        for outcome in (result.value, again.value):
            assert {k: outcome[k] for k in ("app.py", "victim.txt", ".agent/cache/x")} == {
                "app.py": "EROFS", "victim.txt": "EROFS", ".agent/cache/x": "EROFS"}
            assert outcome["/tmp/scratch.txt"] == "written" and outcome["read"].startswith("# demo project")
        assert user_state(dirty_repo) == before
        # ../victim.txt lands in the sandbox's private /tmp (the test project lives under /tmp), never on the host
        assert not (dirty_repo / "victim.txt").exists() and not (dirty_repo.parent / "victim.txt").exists()
        # the ordinary (writable) pool is untouched by the read-only one
        normal = await box.run(Snippet("open('made.txt', 'w').write('ok')"))
        assert normal.ok and (dirty_repo / "made.txt").read_text() == "ok"
    finally:
        await box.aclose()


async def test_rlimits_tier_lists_read_only_runs_among_its_misses(project: Project) -> None:
    weak = await Sandbox.start(project, tier="rlimits", warm_workers=0)
    strong = await Sandbox.start(project, tier="bubblewrap", warm_workers=0)
    try:
        weak_misses = describe(weak)["expected_misses"]
        assert any("project_writable=False" in miss and "not enforced" in miss for miss in weak_misses)
        assert "read_only_runs" in describe(strong)["protections"]
        assert not any("project_writable" in miss for miss in describe(strong)["expected_misses"])
    finally:
        await weak.aclose()
        await strong.aclose()


async def test_run_python_imports_exactly_the_given_tool_files(project: Project, tmp_path: Path) -> None:
    project.tool_path("shout").write_text("def shout(:\n")  # broken on disk
    good = tmp_path / "kept" / "0123abcd.py"
    good.parent.mkdir()
    good.write_text("def shout(word: str) -> str:\n    return word.upper() + '!'\n\n\ndef fail():\n    raise ValueError('own frame')\n")
    project.tool_path("other").write_text("def other() -> int:\n    return 1\n")
    box = await Sandbox.start(project, tier="rlimits", warm_workers=1)
    try:
        from_disk = await box.run(Snippet("import shout\nshout.shout('hi')"))
        assert not from_disk.ok and "SyntaxError" in from_disk.error  # the old behaviour, without tool_paths
        given = {"shout": good}
        result = await box.run(Snippet("import shout\nfrom shout import shout as s\ns('hi'), shout.__name__", tool_paths=given))
        assert result.ok, result.error
        assert result.value == ["HI!", "shout"]
        unknown = await box.run(Snippet("import other", tool_paths=given))  # only the given tools are importable
        assert not unknown.ok and "ModuleNotFoundError" in unknown.error
        failing = await box.run(Snippet("import shout\nshout.fail()", tool_paths=given))
        assert "0123abcd.py" in failing.error and "raise ValueError('own frame')" in failing.error
        assert "importlib" not in failing.error
        stdlib = await box.run(Snippet("import json\njson.dumps(1)", tool_paths={"json_tool": good}))
        assert stdlib.value == "1"
    finally:
        await box.aclose()


async def test_last_good_copies_are_read_only_for_agent_code(project: Project, tmp_path: Path) -> None:
    kept = project.cache_dir / "tools" / "feedface.py"
    kept.parent.mkdir(parents=True, exist_ok=True)
    kept.write_text("def shout(word: str) -> str:\n    return word.upper()\n")
    attack = ("import errno\ntry:\n    open('.agent/cache/tools/feedface.py', 'w').write('def shout(word): return 0')\n"
              "    outcome = 'written'\nexcept OSError as exc:\n    outcome = errno.errorcode[exc.errno]\noutcome")
    box = await Sandbox.start(project, tier="bubblewrap", warm_workers=1)
    try:
        result = await box.run(Snippet(attack))  # an ordinary, project-writable run
        assert result.ok and result.value == "EROFS"
        assert (await box.run(Snippet("import shout\nshout.shout('a')", tool_paths={"shout": kept}))).value == "A"
    finally:
        await box.aclose()
