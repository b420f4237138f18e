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


# --- revert, prune and restore through the catalog and the recipe store --------------------------------------------

import pytest  # noqa: E402

from tests.gitrepo import init_repo  # noqa: E402
from tui_agent.core.catalog.api import Catalog  # noqa: E402
from tui_agent.core.catalog.errors import PipelineError  # noqa: E402
from tui_agent.core.project import Project  # noqa: E402
from tui_agent.core.recipes.api import open_recipes  # noqa: E402
from tui_agent.core.sandbox import Sandbox  # noqa: E402

DOUBLE = '"""Doubles."""\n\n\ndef double(x: int) -> int:\n    """Double a number.\n\n    Args:\n        x: A number.\n    """\n    return 2 * x\n'
DOUBLE_V2 = DOUBLE.replace("return 2 * x", "return x + x")
RECIPE = 'description = "say hi"\n\n[trigger]\non = "command"\n\n[action]\nprompt = "hi"\n'
TOOL_PATH = ".agent/tools/double.py"


async def open_catalog(root: Path) -> tuple[Catalog, Sandbox]:
    project = Project.at(root)
    box = await Sandbox.start(project, warm_workers=0)
    return await Catalog.open(project, box), box


async def close(catalog: Catalog, box: Sandbox) -> None:
    await catalog.aclose()
    await box.aclose()


async def test_revert_and_prune_refuse_an_uncommitted_hand_edit_naming_the_file(repo: Path) -> None:
    catalog, box = await open_catalog(repo)
    try:
        await catalog.save("double", DOUBLE)
        await catalog.save("double", DOUBLE_V2)
        broken = DOUBLE_V2 + "\ndef half(:\n"  # the user's work in progress: broken, so never committed by tuiagent
        (repo / TOOL_PATH).write_text(broken)
        await catalog.outside_edit({"double"})
        for action in (catalog.revert("double"), catalog.prune("double")):
            with pytest.raises(PipelineError, match=r"\.agent/tools/double\.py has edits that are not committed") as info:
                await action
            assert info.value.stage == "unsaved"
        assert (repo / TOOL_PATH).read_text() == broken
        git(repo, "add", TOOL_PATH)  # staged, still not committed
        with pytest.raises(PipelineError, match=r"\.agent/tools/double\.py has staged changes"):
            await catalog.revert("double")
        assert (repo / TOOL_PATH).read_text() == broken
    finally:
        await close(catalog, box)


async def test_a_valid_hand_edit_is_saved_as_a_version_before_a_revert(repo: Path) -> None:
    catalog, box = await open_catalog(repo)
    try:
        await catalog.save("double", DOUBLE)
    finally:
        await close(catalog, box)
    (repo / TOOL_PATH).write_text(DOUBLE_V2)  # edited while tuiagent was not running
    catalog, box = await open_catalog(repo)  # what `tuiagent tools revert double` does first
    try:
        await catalog.revert("double")
    finally:
        await close(catalog, box)
    assert (repo / TOOL_PATH).read_text() == DOUBLE
    assert "+    return x + x" in git(repo, "log", "-p", "--", TOOL_PATH)  # the hand edit is a version in history


def no_repo(root: Path) -> None:
    root.mkdir(parents=True)


def empty_repo(root: Path) -> None:
    init_repo(root, commit=False)


def detached(root: Path) -> None:
    init_repo(root)
    git(root, "checkout", "-q", "--detach")


def merging(root: Path) -> None:
    init_repo(root)
    git(root, "checkout", "-q", "-b", "other")
    (root / "app.py").write_text("print('other')\n")
    git(root, "commit", "-q", "-am", "other side")
    git(root, "checkout", "-q", "main")
    (root / "app.py").write_text("print('main')\n")
    git(root, "commit", "-q", "-am", "main side")
    git(root, "merge", "other", check=False)


def failing_hook(root: Path) -> None:
    init_repo(root)
    hook(root, "pre-commit", "exit 1\n")


@pytest.mark.parametrize("state", [no_repo, empty_repo, detached, merging, failing_hook],
                         ids=["no-repo", "empty-repo", "detached-head", "merge", "failing-hook"])
async def test_restore_works_in_every_deferral_state(tmp_path: Path, state) -> None:  # noqa: ANN001
    root = tmp_path / "project"
    state(root)
    catalog, box = await open_catalog(root)
    try:
        await catalog.save("double", DOUBLE)
        change = await catalog.prune("double")
        assert not change.committed and not (root / TOOL_PATH).exists()
        record = (await catalog.restore("double")).record
        assert record.spec is not None and (root / TOOL_PATH).read_text() == DOUBLE
    finally:
        await close(catalog, box)
    engine = await open_recipes(Project.at(root), catalog)
    try:
        await engine.save_recipe("hello", RECIPE)
        assert (await engine.prune("hello")).commit is None
        await engine.restore("hello")
        assert (root / ".agent/recipes/hello.toml").read_text() == RECIPE
    finally:
        await engine.aclose()


async def test_a_commit_that_failed_at_the_git_stage_is_never_committed_later(repo: Path) -> None:
    catalog, box = await open_catalog(repo)
    try:
        await catalog.save("double", DOUBLE)
        blocker = repo / ".git" / "tuiagent"  # where the commit builds its temporary index: a file breaks it
        if blocker.is_dir():
            blocker.rmdir()
        blocker.write_text("in the way")
        with pytest.raises(PipelineError, match="git commit failed, the file was put back"):
            await catalog.save("double", DOUBLE_V2)
        assert (repo / TOOL_PATH).read_text() == DOUBLE
        blocker.unlink()
        await catalog.save("other", DOUBLE.replace("double", "other"))
    finally:
        await close(catalog, box)
    assert "x + x" not in git(repo, "log", "-p", "--all")
    assert git(repo, "show", f"HEAD:{TOOL_PATH}") == DOUBLE


async def test_a_hand_deleted_recipe_is_committed_as_deleted_and_restorable(repo: Path) -> None:
    catalog, box = await open_catalog(repo)
    try:
        engine = await open_recipes(Project.at(repo), catalog)
        await engine.save_recipe("hello", RECIPE)
        await engine.aclose()
        (repo / ".agent/recipes/hello.toml").unlink()  # by hand, while tuiagent is not running
        engine = await open_recipes(Project.at(repo), catalog)
        assert ".agent/recipes/hello.toml" not in git(repo, "ls-tree", "-r", "--name-only", "HEAD")
        assert "file deleted outside tuiagent" in git(repo, "log", "-1", "--format=%s")
        await engine.restore("hello")
        await engine.aclose()
    finally:
        await close(catalog, box)
    assert (repo / ".agent/recipes/hello.toml").read_text() == RECIPE
