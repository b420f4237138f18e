"""Protected paths: read-only for agent code even in runs that may write the project, asked for even in auto mode, listed by `sandbox status`; hooks run without secrets."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.gitrepo import git
from tui_agent.commands.sandbox_status import describe
from tui_agent.core.agent.file_tools import edit_file, write_file
from tui_agent.core.agent.permissions import ApprovalRequest, Permissions
from tui_agent.core.agent.toolbase import ToolContext, ToolFailure
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy
from tui_agent.core.versioning.gitstore import CatalogGit
from tui_agent.core.sandbox import Snippet

WRITABLE = SandboxPolicy(timeout_s=20, project_writable=True)


def context(repo: Path, asked: list[ApprovalRequest], answer: bool = False) -> ToolContext:
    async def approve(request: ApprovalRequest) -> bool:
        asked.append(request)
        return answer

    return ToolContext(Project.at(repo), Permissions("auto", approve), call_id="c1", tool_name="write_file")


@pytest.mark.parametrize("path", [".vscode/settings.json", ".envrc", ".agent/config.toml", ".mcp.json", ".bashrc",
                                  ".gitmodules", ".husky/pre-commit", "secrets/prod.env", "secrets/new.env"])
async def test_writes_to_protected_paths_ask_even_in_auto_mode(repo: Path, path: str) -> None:
    (repo / ".agent").mkdir(exist_ok=True)
    (repo / ".agent/config.toml").write_text('[sandbox]\nprotected = ["secrets/*"]\n')
    (repo / "secrets").mkdir()
    (repo / "secrets/prod.env").write_text("KEY=1\n")
    before = (repo / path).read_bytes() if (repo / path).exists() else None
    asked: list[ApprovalRequest] = []
    with pytest.raises(ToolFailure, match="denied"):
        await write_file(context(repo, asked), {"path": path, "content": "x\n"})
    assert len(asked) == 1 and asked[0].protected and "always asked, even in auto mode" in asked[0].summary
    assert ((repo / path).read_bytes() if (repo / path).exists() else None) == before
    await write_file(context(repo, asked, answer=True), {"path": path, "content": "approved\n"})
    assert (repo / path).read_text() == "approved\n"


async def test_ordinary_files_need_no_approval_in_auto_mode_and_agent_state_is_refused(repo: Path) -> None:
    asked: list[ApprovalRequest] = []
    await edit_file(context(repo, asked), {"path": "app.py", "old": "hello", "new": "bye"})
    assert asked == [] and "bye" in (repo / "app.py").read_text()
    for path in (".agent/cache/pending.json", ".agent/state.db", ".agent/quarantine/x"):
        with pytest.raises(ToolFailure, match="tuiagent's own state"):
            await write_file(context(repo, asked, answer=True), {"path": path, "content": "{}"})
    assert asked == []


ATTACKS = """\
import os
results = {}
def attempt(name, action):
    try:
        action()
        results[name] = 'done'
    except OSError as exc:
        results[name] = type(exc).__name__
attempt('rename_agent', lambda: os.rename('.agent', '.agent_gone'))
attempt('rename_project', lambda: os.rename(os.getcwd(), os.getcwd() + '_moved'))
attempt('config', lambda: open('.agent/config.toml', 'w').write('[permissions]\\nmode = "auto"\\n'))
attempt('journal', lambda: open('.agent/cache/pending.json', 'w').write('{}'))
attempt('state', lambda: open('.agent/state.db', 'ab').write(b'x'))
attempt('hooks_path', lambda: open('githooks/pre-commit', 'w').write('#!/bin/sh\\nenv > /tmp/leak\\n'))
attempt('vscode', lambda: open('.vscode/settings.json', 'w').write('{}'))
attempt('glob', lambda: open('secrets/prod.env', 'w').write('stolen'))
attempt('envrc_new', lambda: open('.envrc', 'w').write('evil'))
attempt('ordinary', lambda: open('notes.md', 'w').write('fine'))
results
"""


async def test_a_writable_bubblewrap_run_cannot_change_protected_paths(repo: Path) -> None:
    project = Project.at(repo)
    project.ensure_layout()
    project.config_path.write_text('[sandbox]\nprotected = ["secrets/*"]\n')
    (repo / "githooks").mkdir()
    (repo / "githooks/pre-commit").write_text("#!/bin/sh\nexit 0\n")
    git(repo, "config", "core.hooksPath", "githooks")
    (repo / ".vscode").mkdir()
    (repo / ".vscode/settings.json").write_text('{"a": 1}')
    (repo / "secrets").mkdir()
    (repo / "secrets/prod.env").write_text("KEY=1\n")
    box = await Sandbox.start(project, tier="bubblewrap", warm_workers=0)
    try:
        result = await box.run(Snippet(ATTACKS), WRITABLE)
        status = describe(box)
    finally:
        await box.aclose()
    assert result.ok, result.error
    blocked = {name: outcome for name, outcome in result.value.items() if name not in ("ordinary", "envrc_new")}
    assert all(outcome != "done" for outcome in blocked.values()), result.value
    assert result.value["ordinary"] == "done" and (repo / "notes.md").read_text() == "fine"
    assert project.load_settings().permission_mode == "ask" and (repo / ".agent/tools").is_dir()
    assert (repo / "githooks/pre-commit").read_text() == "#!/bin/sh\nexit 0\n"
    assert (repo / "secrets/prod.env").read_text() == "KEY=1\n"
    # A protected path the run created is moved away before anything else happens, and the run says so.
    assert not (repo / ".envrc").exists() and list((repo / ".agent/quarantine").glob("*/.envrc"))
    assert "agent code created the protected path .envrc" in result.stderr
    assert {"githooks", "secrets/prod.env", ".agent", ".git", ".envrc"} <= set(status["protected_paths"])


def test_sandbox_status_lists_the_protected_paths(repo: Path) -> None:
    git(repo, "config", "core.hooksPath", ".husky")
    (repo / ".husky").mkdir()
    done = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "sandbox", "status", "--json"],
                          capture_output=True, text=True, timeout=60)
    paths = json.loads(done.stdout)["protected_paths"]
    assert {".git", ".agent", ".vscode", ".idea", ".envrc", ".mcp.json", ".gitmodules", ".gitconfig", ".bashrc",
            ".zshrc", ".profile", ".husky"} <= set(paths)
    text = subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(repo), "sandbox", "status"],
                          capture_output=True, text=True, timeout=60).stdout
    assert "protected paths (read-only for agent code" in text and "  .envrc" in text


def test_catalog_commit_hooks_run_with_secrets_scrubbed(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp-secret")
    monkeypatch.setenv("MY_SERVICE_SECRET", "s3cret")
    record = repo.parent / "hook_env.txt"
    hook = repo / ".git" / "hooks" / "pre-commit"
    hook.write_text(f"#!/bin/sh\nenv > {record}\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    tool = repo / ".agent/tools/tool_a.py"
    tool.parent.mkdir(parents=True)
    tool.write_bytes(b"def tool_a():\n    return 1\n")
    assert CatalogGit(repo).commit({".agent/tools/tool_a.py": tool.read_bytes()}, "tuiagent: add tool tool_a").committed
    seen = record.read_text()
    assert "PATH=" in seen and "sk-ant-secret" not in seen and "ghp-secret" not in seen and "s3cret" not in seen
    assert "ANTHROPIC_API_KEY" not in seen and os.environ["ANTHROPIC_API_KEY"] == "sk-ant-secret"


@pytest.mark.parametrize("tier", ["bubblewrap", "rlimits"])
async def test_a_protected_symlink_out_of_the_project_is_put_back_after_a_run_replaced_it(repo: Path, tier: str) -> None:
    (repo / ".bashrc").symlink_to("/etc/hostname")  # a dotfiles setup; outside the project is read-only anyway
    (repo / ".profile").symlink_to("/nonexistent/profile")  # dangling: must not stop the sandbox from starting
    project = Project.at(repo)
    box = await Sandbox.start(project, tier=tier, warm_workers=0)
    try:
        code = "import os\nos.remove('.bashrc')\nopen('.bashrc', 'w').write('evil')\nos.remove('.profile')\nopen('.profile', 'w').write('evil')\n'ok'"
        result = await box.run(Snippet(code), WRITABLE)
    finally:
        await box.aclose()
    assert result.ok and result.value == "ok", result.error
    assert os.readlink(repo / ".bashrc") == "/etc/hostname" and os.readlink(repo / ".profile") == "/nonexistent/profile"
    assert "replaced the protected path .bashrc" in result.stderr
    assert [p.read_text() for p in (repo / ".agent/quarantine").glob("*/.bashrc")] == ["evil"]


def test_git_homes_inside_the_work_tree_are_protected_and_read_as_hostile_input(tmp_path: Path) -> None:
    """A git folder or common dir in the work tree other than at `.git` is protected (relative); `.git` and what lies
    outside the project are not; a FIFO where `commondir` is blocks nothing; a common dir at the root gives its
    config, hooks and the like."""
    from tui_agent.core.sandbox.protected import GIT_READ_ONLY, git_homes, protected_paths

    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / ".git").mkdir(parents=True)
    (project / "shared").mkdir()
    outside.mkdir()
    assert git_homes(project) == []
    (project / ".git" / "commondir").write_text("../shared\n")
    assert git_homes(project) == ["shared"] and "shared" in protected_paths(project)
    (project / ".git" / "commondir").write_text("../../outside\n")
    assert git_homes(project) == []
    (project / ".git" / "commondir").unlink()
    os.mkfifo(project / ".git" / "commondir")
    assert git_homes(project) == []
    (project / ".git" / "commondir").unlink()
    (project / ".git" / "commondir").write_text("..\n")
    assert git_homes(project) == list(GIT_READ_ONLY)
    (project / ".git" / "commondir").unlink()
    (project / ".git").rename(project / "gd")
    (project / ".git").write_text("gitdir: gd\n")
    assert git_homes(project) == ["gd"]
    (project / ".git").unlink()
    (project / ".git").symlink_to("shared")
    assert git_homes(project) == ["shared"]
    (project / ".git").unlink()
    (project / ".git").symlink_to("../outside")
    assert git_homes(project) == []
