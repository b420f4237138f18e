"""Round 6 red team: a downloaded repository (with its `.git`) opened untrusted must not make tuiagent's host code
write outside the project through its git layout (`.git` files, `commondir`), follow a committed `.agent` link out of
the project, or print a committed file name's terminal escapes. Holes are strict xfails (see the report)."""

from __future__ import annotations

import hashlib
import shutil
import sys
from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.gitrepo import git, init_repo
from tests.sandbox_helpers import bubblewrap_sandbox
from tests.test_hostile_round5 import SHELL, WRITABLE, host_git
from tui_agent.cli import main
from tui_agent.core.project import Project
from tui_agent.core.rootfind import ProjectRootError, locate
from tui_agent.core.sandbox import Sandbox, Snippet
from tui_agent.core.sandbox.launch import probe_bubblewrap

pytestmark = pytest.mark.usefixtures("untrusted_config")


def fingerprint(folder: Path) -> dict[str, str]:
    """Every entry under `folder`: a file's sha256, "dir" for a folder."""
    return {str(path.relative_to(folder)): hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
            for path in sorted(folder.rglob("*"))}


@pytest.mark.parametrize("form", ["gitdir-file", "symlink"])
def test_a_dot_git_file_naming_another_repository_gets_nothing_written_there_before_trust(
        tmp_path: Path, api: FakeMessagesAPI, form: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Refused like a `gitdir:` into the work tree: the project would be another checkout's repository."""
    victim = init_repo(tmp_path / "victim")  # the person's own repository next to the download
    project = tmp_path / "download"
    project.mkdir()
    if form == "symlink":
        (project / ".git").symlink_to("../victim/.git")
    else:
        (project / ".git").write_text("gitdir: ../victim/.git\n")
    (project / "notes.txt").write_text("hello\n")
    before = fingerprint(victim / ".git")
    api.enqueue(reply(tool_use("read_file", {"path": "notes.txt"})), reply(text("done")))
    assert main(["--project", str(project), "--sandbox-tier", "rlimits", "-p", "what is this?"]) != 0
    assert "another checkout" in capsys.readouterr().err
    after = fingerprint(victim / ".git")
    assert sorted(name for name in {*before, *after} if before.get(name) != after.get(name)) == []


def common_dir_in_work_tree(tmp_path: Path) -> Path:
    """A repository whose `.git/commondir` names `shared/`, a plain folder of the work tree holding its config,
    hooks, refs and objects (git uses it: `git rev-parse --git-common-dir`)."""
    project = init_repo(tmp_path / "project")
    shared = project / "shared"
    shared.mkdir()
    for name in ("objects", "refs", "config", "hooks", "info", "packed-refs"):
        if (project / ".git" / name).exists():
            shutil.move(str(project / ".git" / name), str(shared / name))
    (project / ".git" / "commondir").write_text("../shared\n")
    assert git(project, "rev-parse", "--git-common-dir").strip() == str(shared)
    return project


def test_a_common_dir_inside_the_work_tree_is_refused_like_a_git_dir_inside(tmp_path: Path) -> None:
    project = common_dir_in_work_tree(tmp_path)
    with pytest.raises(ProjectRootError):
        locate(project)


def test_a_committed_agent_link_out_of_the_project_gets_nothing_written_through_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    project = init_repo(tmp_path / "project")
    (project / ".agent").symlink_to(outside)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "a linked .agent")
    for verb in (["tools", "list"], ["recipes", "list"], ["sandbox", "status"], ["trust", "--show"], ["config"]):
        main(["--project", str(project), "--sandbox-tier", "rlimits", *verb])
    assert list(outside.iterdir()) == []
    assert ".agent is a symlink" in capsys.readouterr().err


def test_a_recipe_file_name_with_terminal_escapes_is_shown_escaped(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    project = init_repo(tmp_path / "project")
    name = "evil\x1b]0;PWNED\x07\x1b[2J"
    (project / ".agent" / "recipes").mkdir(parents=True)
    (project / ".agent" / "recipes" / f"{name}.toml").write_text(
        'description = "d\x1b[31mred"\n\n[trigger]\non = "session_start"\n\n[action]\nprompt = "x"\n')
    git(project, "add", "-A")
    git(project, "commit", "-qm", "an escaping recipe name")
    for verb in (["trust", "--show"], ["recipes", "list"], ["tools", "list"]):
        main(["--project", str(project), "--sandbox-tier", "rlimits", *verb])
    shown = capsys.readouterr()
    assert "evil" in shown.out
    assert "\x1b" not in shown.out + shown.err and "\x07" not in shown.out + shown.err


DEEP_TOOL = '"""A tool file whose one expression nests past the parser\'s recursion limit."""\nX = ' + "1+" * 300_000 + "1\n"
DEEP_CASES = [
    (".agent/tools/deep.py", DEEP_TOOL, ["trust", "--show"]),
    (".agent/tools/deep.py", DEEP_TOOL, ["tools", "list"]),
    (".agent/tools/deep.py", DEEP_TOOL[:20_000] + "1\n", ["--trust-project", "tools", "show", "deep"]),  # under 256 KB
    (".agent/config.toml", "a = " + "[" * 100_000 + "]" * 100_000 + "\n", ["trust", "--show"]),
    (".agent/config.toml", "a = " + "[" * 100_000 + "]" * 100_000 + "\n", ["config"]),
    (".mcp.json", "[" * 100_000 + "]" * 100_000, ["trust", "--show"]),
    (".mcp.json", "[" * 100_000 + "]" * 100_000, ["mcp", "list"]),
    (".agent/config.local.toml", "a = " + "[" * 100_000 + "]" * 100_000 + "\n", ["trust", "--show"]),
]


def committed(folder: Path, name: str, content: str) -> Path:
    """A new repository at `folder` whose one commit holds `content` at `name`."""
    project = init_repo(folder)
    (project / name).parent.mkdir(parents=True, exist_ok=True)
    (project / name).write_text(content)
    git(project, "add", "-A")
    git(project, "commit", "-qm", "a deeply nested file")
    return project


@pytest.mark.parametrize("name, content, verb", DEEP_CASES, ids=[f"{c[0]}-{c[2][0]}" for c in DEEP_CASES])
def test_a_deeply_nested_committed_file_is_a_named_problem_not_a_crash(
        tmp_path: Path, name: str, content: str, verb: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    project = committed(tmp_path / "project", name, content)
    main(["--project", str(project), "--sandbox-tier", "rlimits", *verb])
    shown = capsys.readouterr()
    assert Path(name).name in shown.out + shown.err and "Traceback" not in shown.err


@pytest.mark.parametrize("name, content, verb", [
    ("pyproject.toml", "a = " + "[" * 10_000 + "]" * 10_000 + "\n", ["--trust-project", "tools", "list"]),  # poetry's venv name
    (".agent/drift-reviews.json", "[" * 10_000 + "]" * 10_000, ["--trust-project", "tools", "list"])],
    ids=lambda value: value if isinstance(value, str) and len(value) < 40 else "")
def test_a_deeply_nested_committed_file_read_at_open_is_skipped_like_a_malformed_one(
        tmp_path: Path, api: FakeMessagesAPI, name: str, content: str, verb: list[str]) -> None:
    project = committed(tmp_path / "project", name, content)
    main(["--project", str(project), "--sandbox-tier", "rlimits", *verb])
    api.enqueue(reply(text("done")))
    assert main(["--project", str(project), "--sandbox-tier", "rlimits", "--trust-project", "-p", "hi"]) == 0


@pytest.mark.parametrize("verb", [["trust", "--show"], ["recipes", "list"]], ids="-".join)
def test_a_deeply_nested_committed_recipe_is_a_named_problem_not_a_crash(
        tmp_path: Path, verb: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    project = init_repo(tmp_path / "project")
    (project / ".agent" / "recipes").mkdir(parents=True)
    (project / ".agent" / "recipes" / "deep.toml").write_text("a = " + "[" * 10_000 + "]" * 10_000 + "\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "a deeply nested recipe")
    if verb[0] == "recipes":
        assert main(["--project", str(project), "trust"]) == 0
    main(["--project", str(project), "--sandbox-tier", "rlimits", *verb])
    shown = capsys.readouterr()
    assert "deep" in shown.out + shown.err and "nested too deeply" in shown.out + shown.err, shown


async def test_a_run_never_leaves_a_config_the_persons_git_obeys_in_a_common_dir_inside_the_work_tree(
        tmp_path: Path) -> None:
    if probe_bubblewrap() is not None:
        pytest.skip("bubblewrap is not usable here")
    project = common_dir_in_work_tree(tmp_path)
    canary = tmp_path / "fsmonitor-ran"
    box = await Sandbox.start(Project.at(project), tier="bubblewrap", warm_workers=0)
    try:
        if box.runs.overlay_problem is not None:
            pytest.skip(box.runs.overlay_problem)
        command = f"printf '[core]\\n\\tfsmonitor = \"touch {canary}; false\"\\n' >> shared/config"
        result = await box.run(Snippet(SHELL.format(command=command)), WRITABLE)
        assert result.ok and isinstance(result.value, dict) and result.value["exit_code"] == 0, result
    finally:
        await box.aclose()
    assert not canary.exists()  # nothing ran yet: the sandbox kept the run in
    host_git(project, "status")  # the person's own git (their shell prompt's)
    assert not canary.exists()



@pytest.mark.parametrize("overlay", [True, False])
async def test_a_run_never_leaves_a_config_in_a_git_folder_a_gitdir_file_names_inside_the_work_tree(
        tmp_path: Path, overlay: bool) -> None:
    """`.git` a file naming `gd/`: git's folder is a plain folder of the work tree, protected like `.git` (bound
    read-only without an overlay, refused whole and quarantined by the harvest through one)."""
    project = init_repo(tmp_path / "project")
    shutil.move(str(project / ".git"), str(project / "gd"))
    (project / ".git").write_text("gitdir: gd\n")
    assert git(project, "rev-parse", "--absolute-git-dir").strip() == str(project / "gd")
    canary, config = tmp_path / "fsmonitor-ran", (project / "gd" / "config").read_bytes()
    async with bubblewrap_sandbox(project, overlay=overlay) as box:
        seen = len(box.notices)
        command = f"printf '[core]\\n\\tfsmonitor = \"touch {canary}; false\"\\n' >> gd/config"
        result = await box.run(Snippet(SHELL.format(command=command)), WRITABLE)
        assert result.ok and isinstance(result.value, dict), result
        assert (result.value["exit_code"] == 0) == overlay, result.value  # read-only without an overlay
        said = " ".join(box.notices[seen:])
        assert "protected path gd" in said if overlay else "refused: writing gd" in said, said
    assert (project / "gd" / "config").read_bytes() == config
    host_git(project, "status")
    assert not canary.exists()


def test_an_include_of_a_file_written_after_open_runs_nothing_on_the_host(tmp_path: Path, api: FakeMessagesAPI) -> None:
    canary = tmp_path / "filter-ran"
    project = init_repo(tmp_path / "project")
    (project / ".gitattributes").write_text("*.txt filter=later\n")
    (project / "notes.txt").write_text("one\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "attributes")
    git(project, "config", "include.path", "../later.cfg")  # missing when tuiagent opens the project
    included = f'[filter "later"]\n\tclean = touch {canary}; cat\n'
    api.enqueue(reply(tool_use("write_file", {"path": "later.cfg", "content": included})),
                reply(tool_use("write_file", {"path": "notes.txt", "content": "two\n"})), reply(text("done")))
    assert main(["--project", str(project), "--sandbox-tier", "rlimits", "--yes", "-p", "tidy up"]) == 0
    assert (project / "later.cfg").read_text() == included and (project / "notes.txt").read_text() == "two\n"
    assert not canary.exists()


REWRITE_KEEPING_MTIME = ("import os, sys; st = os.stat('inc.cfg'); open('inc.cfg', 'a').write(sys.argv[1]); "
                         "os.utime('inc.cfg', ns=(st.st_atime_ns, st.st_mtime_ns))")


@pytest.mark.parametrize("tier", ["rlimits", "bubblewrap"])
def test_an_included_file_edited_with_its_mtime_put_back_runs_nothing_on_the_host(
        tmp_path: Path, api: FakeMessagesAPI, tier: str) -> None:
    if tier == "bubblewrap" and probe_bubblewrap() is not None:
        pytest.skip("bubblewrap is not usable here")
    canary = tmp_path / "filter-ran"
    project = init_repo(tmp_path / "project")
    (project / ".gitattributes").write_text("*.txt filter=inc\n")
    (project / "notes.txt").write_text("one\n")
    (project / "inc.cfg").write_text("[user]\n\tname = someone\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "attributes and an included file")
    git(project, "config", "include.path", "../inc.cfg")
    added = f'[filter "inc"]\n\tclean = touch {canary}; cat\n'
    command = f"{sys.executable} -c \"{REWRITE_KEEPING_MTIME}\" '{added}' && echo two > notes.txt"
    api.enqueue(reply(tool_use("run_shell", {"command": command})), reply(text("done")))
    assert main(["--project", str(project), "--sandbox-tier", tier, "--yes", "-p", "tidy up"]) == 0
    assert "filter" in (project / "inc.cfg").read_text() and (project / "notes.txt").read_text() == "two\n"
    assert not canary.exists()


CLEAR = "\x1b[2J\x1b[H"
"""Clears the screen and homes the cursor: what follows could stand in for the trust preview's real lines."""


def escaping_project(tmp_path: Path) -> Path:
    """A project whose every committed text a CLI view shows (instructions, grants, a tool's docstring and source, MCP
    servers, a recipe, a commit message, git config) carries an escape sequence that clears the screen."""
    from tests.hostile.repo import TOOL

    project = init_repo(tmp_path / "project")
    files = {
        "AGENTS.md": f"# Rules{CLEAR}Permission grants: none\nmore\n",
        ".agent/config.toml": 'model = "m\\u001b[2J"\n[permissions]\nallow = ["run_shell(\\u001b[2Jx:*)"]\n',
        ".agent/tools/greet.py": TOOL.format(marker=str(tmp_path / "never")).replace("Greet someone", f"Greet {CLEAR}"),
        ".mcp.json": '{"mcpServers": {"pi\\u001b[2Jng": {"command": "echo\\u001b[2J", "args": ["a\\u001b[H"]}}}',
        ".agent/recipes/ok.toml": 'description = "d\\u001b[2J"\n\n[trigger]\non = "session_start"\n\n[action]\nprompt = "x"\n',
    }
    for name, content in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(content)
    git(project, "add", "-A")
    git(project, "commit", "-qm", f"a commit message{CLEAR}")
    git(project, "config", "filter.x.clean", f"touch{CLEAR}")
    return project


VIEWS = [["trust", "--show"], ["tools", "list"], ["tools", "history", "greet"], ["mcp", "list"], ["config"],
         ["tools", "show", "greet"], ["--trust-project", "tools", "show", "greet"], ["tools", "diff", "greet"],
         ["--trust-project", "tools", "diff", "greet"]]


@pytest.mark.parametrize("verb", VIEWS, ids=lambda verb: "-".join(verb))
def test_no_committed_text_reaches_the_terminal_as_an_escape_sequence(tmp_path: Path, verb: list[str],
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    project = escaping_project(tmp_path)
    main(["--project", str(project), "--sandbox-tier", "rlimits", *verb])
    shown = capsys.readouterr()
    assert "2J" in shown.out + shown.err  # the committed text is shown...
    assert "\x1b" not in shown.out + shown.err  # ...escaped


def test_a_committed_web_search_setting_offers_no_search_until_trusted(tmp_path: Path, api: FakeMessagesAPI,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    project = init_repo(tmp_path / "project")
    (project / ".agent").mkdir()
    (project / ".agent" / "config.toml").write_text("[web]\nsearch = true\nsearch_max_uses = 50\n")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "web search on")
    api.enqueue(reply(text("done")))
    assert main(["--project", str(project), "--sandbox-tier", "rlimits", "--model", "claude-sonnet-4-5", "-p", "hi"]) == 0
    assert "web_search" not in api.requests[-1].tool_names
    assert "web.search = true" in capsys.readouterr().err  # the restricted session says what it ignored
    assert main(["--project", str(project), "trust", "--show"]) == 0
    assert "web search: up to 50 searches a request" in capsys.readouterr().out
    assert main(["--project", str(project), "trust"]) == 0
    api.enqueue(reply(text("done")))
    assert main(["--project", str(project), "--sandbox-tier", "rlimits", "--model", "claude-sonnet-4-5", "-p", "hi"]) == 0
    assert "web_search" in api.requests[-1].tool_names  # trusted: the project's setting applies


def test_a_turn_and_its_undo_run_none_of_the_repositorys_git_config(tmp_path: Path, api: FakeMessagesAPI) -> None:
    from tests.git_door_helpers import hostile_repo as configured_repo, ran

    project, canaries = configured_repo(tmp_path)
    api.enqueue(reply(tool_use("write_file", {"path": "notes.txt", "content": "agent\n"})),
                reply(tool_use("write_file", {"path": "agent.txt", "content": "new\n"})), reply(text("done")))
    assert main(["--project", str(project), "--sandbox-tier", "rlimits", "--yes", "-p", "edit"]) == 0
    assert (project / "notes.txt").read_text() == "agent\n"
    assert main(["--project", str(project), "--sandbox-tier", "rlimits", "--undo"]) == 0
    assert (project / "notes.txt").read_text() == "one\ntwo\n" and not (project / "agent.txt").exists()
    assert ran(canaries) == []
