"""Delayed effects under both tiers: agent code runs with the project writable, then tuiagent takes its ordinary next step; the user's files, index, history, config and environment are measured directly."""

from __future__ import annotations

import hashlib
import os
import secrets
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.agent_helpers import GOOD_TOOL
from tests.cli_in_process import run_in_process
from tests.gitrepo import add_hooks_running_a_script, git, make_user_changes
from tests.hostile.delayed import (
    CALL, CLI, COMMIT, CONFIG, CONFIG_FILE, DELAYED_CASES, ENV, ENVRC_LINK, FILES, GLOBS, HISTORY, HOOK_SCRIPT, HOOKS_ABSENT, HUSKY,
    INDEX, OPEN, OUTSIDE, PROTECTED, RECIPES, RESUME, DelayedCase,
)
from tui_agent.core.agent.permissions import deny_all
from tui_agent.core.agent.sessions import SessionLog
from tui_agent.core.catalog.api import Catalog
from tui_agent.core.project import Project
from tui_agent.core.runtime import open_runtime
from tui_agent.core.sandbox import Sandbox, SandboxPolicy
from tui_agent.core.sandbox.protected import PROTECTED_NAMES
from tui_agent.core.runtime_state import agent_of
from tui_agent.core.sandbox import Snippet

TIERS = ["bubblewrap", "rlimits"]
NEW_TOOL = GOOD_TOOL.replace("count_lines", "count_rows")
PROTECTED_FILES = (".git/config", ".git/hooks", ".husky", "githooks", "secrets")


def digest(path: Path) -> str:
    """A hash of a file or folder (names, modes and contents), or "absent"."""
    if not os.path.lexists(path):
        return "absent"
    hasher = hashlib.sha256()
    for item in sorted([path, *path.rglob("*")]) if path.is_dir() else [path]:
        hasher.update(str(item.relative_to(path.parent)).encode())
        if item.is_symlink():
            hasher.update(b"link:" + os.readlink(item).encode())
        elif item.is_file():
            hasher.update(oct(item.stat().st_mode).encode() + item.read_bytes())
    return hasher.hexdigest()


def user_files(root: Path) -> dict[str, str]:
    skipped = (".git", ".agent", ".agent_old")
    return {p.relative_to(root).as_posix(): digest(p) for p in sorted(root.rglob("*"))
            if p.is_file() and p.relative_to(root).parts[0] not in skipped}


def index_outside_agent(root: Path) -> list[str]:
    return [line for line in git(root, "ls-files", "-s").splitlines() if "\t.agent/" not in line]


@dataclass
class World:
    project: Project
    outside: Path
    secrets: dict[str, str]
    after_run: dict[str, object] = field(default_factory=dict)
    before_run: dict[str, object] = field(default_factory=dict)

    @property
    def root(self) -> Path:
        return self.project.root

    def protected_state(self) -> dict[str, str]:
        return {name: digest(self.root / name) for name in (*PROTECTED_FILES, *PROTECTED_NAMES) if name not in (".agent", ".git")} | {
            ".agent/config.toml": digest(self.project.config_path)}

    def take(self) -> dict[str, object]:
        return {FILES: user_files(self.root), INDEX: index_outside_agent(self.root), HISTORY: git(self.root, "rev-parse", "HEAD").strip(),
                OUTSIDE: {p.name: digest(p) for p in self.outside.iterdir()}, PROTECTED: self.protected_state()}


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    values = {"ANTHROPIC_API_KEY": f"sk-ant-canary-{secrets.token_hex(8)}", "GITHUB_TOKEN": f"ghp-canary-{secrets.token_hex(8)}"}
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    return values


async def make_world(repo: Path, tmp_path: Path, case_: DelayedCase, secret_values: dict[str, str]) -> World:
    project = Project.at(repo)
    project.ensure_layout()
    project.tool_path("count_lines").write_text(GOOD_TOOL)
    git(repo, "add", ".agent")
    git(repo, "commit", "-q", "-m", "catalog")
    if HUSKY in case_.setup:
        hook = repo / ".husky" / "pre-commit"
        hook.parent.mkdir()
        hook.write_text("#!/bin/sh\nexit 0\n")
        hook.chmod(0o755)
        git(repo, "add", ".husky")
        git(repo, "commit", "-q", "-m", "husky")
        git(repo, "config", "core.hooksPath", ".husky")
    if HOOK_SCRIPT in case_.setup:
        add_hooks_running_a_script(repo, "#!/bin/sh\nexit 0\n", ("pre-commit", "commit-msg"))
    if CONFIG_FILE in case_.setup:
        project.config_path.write_text('[permissions]\nmode = "ask"\n')
    if GLOBS in case_.setup:
        project.config_path.write_text('[sandbox]\nprotected = ["secrets/*"]\n')
        (repo / "secrets").mkdir()
        (repo / "secrets/prod.env").write_text("KEY=1\n")
    if ENVRC_LINK in case_.setup:
        (repo / "env").mkdir()
        (repo / "env/dev.envrc").write_text("export A=1\n")
        (repo / ".envrc").symlink_to("env/dev.envrc")
    if HOOKS_ABSENT in case_.setup:
        git(repo, "config", "core.hooksPath", "githooks")
    box = await Sandbox.start(project, warm_workers=0)  # tuiagent ran here before: cached copies, state.db rows
    try:
        await (await Catalog.open(project, box)).aclose()
    finally:
        await box.aclose()
    log = SessionLog.create(project, model="test")
    log.append_message({"role": "user", "content": [{"type": "text", "text": "hello"}]})
    log.close()
    make_user_changes(repo)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("original")
    return World(project, outside, secret_values)


async def run_agent_code(world: World, case_: DelayedCase, tier: str) -> None:
    box = await Sandbox.start(world.project, tier=tier, warm_workers=0)
    try:
        await box.run(Snippet(case_.code.format(outside=world.outside)), SandboxPolicy(timeout_s=20, project_writable=True))
    finally:
        await box.aclose()


def run_cli(world: World, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tui_agent.cli", "--project", str(world.root), *args],
                          capture_output=True, text=True, timeout=120, env=dict(os.environ))


async def next_step(world: World, step: str, tier: str) -> None:
    """tuiagent's ordinary next step after agent code ran."""
    if step == CLI:  # `main` in this process (a fresh start of it reads the project as a new process would)
        run_in_process("--project", str(world.root), "tools", "list")
    elif step == RECIPES:
        run_cli(world, "recipes", "list")
    elif step == RESUME:
        runtime = await open_runtime(world.root, approve=deny_all, continue_latest=True, api_key="test-key",
                                     base_url="http://127.0.0.1:9", sandbox_tier=tier)
        try:
            world.after_run["mode"] = agent_of(runtime).permissions.mode if agent_of(runtime) else None
        finally:
            await runtime.aclose()
    else:
        box = await Sandbox.start(world.project, tier=tier, warm_workers=0)
        try:
            catalog = await Catalog.open(world.project, box)
            if step == COMMIT:
                await catalog.save("count_rows", NEW_TOOL)
            elif step == CALL:
                await catalog.call_tool("count_lines", {"path": "README.md"})
            else:
                assert step == OPEN
            await catalog.aclose()
        finally:
            await box.aclose()


def secrets_found(world: World) -> list[str]:
    found = []
    for folder in (world.root, world.outside):
        for path in folder.rglob("*"):
            if ".git" in path.relative_to(folder).parts[:1] or not path.is_file():
                continue
            data = path.read_bytes()
            found += [f"{path}: {name}" for name, value in world.secrets.items() if value.encode() in data]
    return found


def check_effects(world: World, case_: DelayedCase, tier: str) -> None:
    misses = case_.rlimits_misses if tier == "rlimits" else frozenset()
    after = world.take()
    failures: list[str] = []
    for effect in (FILES, INDEX, OUTSIDE):
        if effect not in misses and after[effect] != world.after_run[effect]:
            failures.append(f"{effect} changed by the step: {world.after_run[effect]} -> {after[effect]}")
    new_commits = git(world.root, "rev-list", f"{world.after_run[HISTORY]}..HEAD").split()
    touched = {name for sha in new_commits for name in git(world.root, "diff-tree", "--no-commit-id", "--name-only", "-r", sha).split()}
    if HISTORY not in misses and any(not name.startswith(".agent/") for name in touched):
        failures.append(f"the step committed paths outside .agent/: {sorted(touched)}")
    if PROTECTED not in misses:
        changed = {k: v for k, v in after[PROTECTED].items() if v != world.before_run[PROTECTED][k]}
        changed.pop(".agent/config.toml", None)  # measured under CONFIG
        if changed:
            failures.append(f"protected paths changed: {sorted(changed)}")
    if CONFIG not in misses:
        if after[PROTECTED][".agent/config.toml"] != world.before_run[PROTECTED][".agent/config.toml"]:
            failures.append(".agent/config.toml changed")
        if world.project.load_settings().permission_mode != "ask" or world.after_run.get("mode", "ask") != "ask":
            failures.append(f"the permission mode became {world.after_run.get('mode')}")
    if ENV not in misses and secrets_found(world):
        failures.append(f"secrets landed in files: {secrets_found(world)}")
    assert not failures, f"{case_.name} under {tier}: " + "; ".join(failures)


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("case_", DELAYED_CASES, ids=[c.name for c in DELAYED_CASES])
async def test_delayed_effect(case_: DelayedCase, tier: str, repo: Path, tmp_path: Path, secret_env: dict[str, str]) -> None:
    world = await make_world(repo, tmp_path, case_, secret_env)
    world.before_run = world.take()
    await run_agent_code(world, case_, tier)
    world.after_run = world.take()
    await next_step(world, case_.step, tier)
    check_effects(world, case_, tier)


def test_at_least_fifteen_delayed_cases_and_every_miss_is_a_known_effect() -> None:
    assert len(DELAYED_CASES) >= 15 and len({c.name for c in DELAYED_CASES}) == len(DELAYED_CASES)
    assert all(c.rlimits_misses <= {FILES, INDEX, HISTORY, CONFIG, ENV, PROTECTED, OUTSIDE} for c in DELAYED_CASES)
