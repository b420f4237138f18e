"""open_runtime(): wires project, settings, sandbox, catalog, recipes, permissions, session and agent (CLI and TUI alike)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_agent.core.agent.loop import Agent
from tui_agent.core.agent.model import ModelClient, configuration_hint, configured_base_url
from tui_agent.core.agent.permissions import ApprovalCallback, Permissions
from tui_agent.core.agent.pricing import UsageTotals, default_model
from tui_agent.core.agent.sessions import SessionLog, latest_session_id, load_messages, load_usage
from tui_agent.core.changes import ChangeFeed
from tui_agent.core.project import Project, Settings
from tui_agent.core.runtime_restricted import (held_mcp_hub, preview_stores, project_permissions,
                                               restricted_notes)
from tui_agent.core.trust.check import (TrustStatus, check, end_this_run, tools_changed_since_last_seen,
                                         trust_for_this_run)
from tui_agent.core.trust.restrict import ignored_grants, restricted_settings
from tui_agent.core.versioning.store import VersionedStore
from tui_agent.core.undo.service import UndoService
from tui_agent.core.versioning.checkpoints import Checkpoints
from tui_agent.core.watch import ProjectWatcher

if TYPE_CHECKING:
    from tui_agent.core.runtime_state import RuntimeState
    from tui_agent.core.catalog.api import AskInitGit, Catalog
    from tui_agent.core.agent.providers import ToolProvider
    from tui_agent.core.mcp.hub import McpHub
    from tui_agent.core.recipes.engine import RecipeEngine
    from tui_agent.core.recipes.seams import SubmitPrompt
    from tui_agent.core.sandbox import Sandbox
    from tui_agent.core.tending.drift_watch import DriftWatch
    from tui_agent.core.tending.suggestions import SuggestionBook


@dataclass
class Runtime:
    """Everything a front end needs; `agent` is None when no model is configured (`model_error` says how).

    `trust` says whether the project is trusted; a restricted runtime has no catalog, recipes or started MCP
    servers, its `settings` are the project's without committed grants, and `state` names which of the states
    below the runtime is in (front ends ask that one question)."""

    project: Project
    settings: Settings
    permissions: Permissions
    model: str
    trust: TrustStatus
    sandbox: Sandbox | None = None
    catalog: Catalog | None = None
    recipes: RecipeEngine | None = None
    mcp: McpHub | None = None
    """The session's MCP servers (`.mcp.json`, `[mcp.servers]`)."""
    agent: Agent | None = None
    session: SessionLog | None = None
    model_error: str | None = None
    problems: list[str] = field(default_factory=list)
    resumed: bool = False
    undo: UndoService | None = None
    """The UndoService (checkpoints around each turn, /undo, /rewind, /diff); None outside a git work tree."""
    changes: ChangeFeed = field(default_factory=ChangeFeed)
    """The project's one change stream (tools, recipes, files, branch, usage): front ends subscribe here."""
    watcher: ProjectWatcher | None = None
    """The one project watcher, feeding the catalog, the recipes and `changes` (None when the catalog is unavailable)."""
    watch_task: asyncio.Task[None] | None = None
    versioned: dict[str, VersionedStore] = field(default_factory=dict)
    """"tool" / "recipe" → the same store verbs for both (save, revert, prune, restore, history, diff, outside edit)."""
    suggestions: SuggestionBook | None = None
    """Repeated call chains worth a tool, for the catalog pane's `suggested` rows."""
    drift_watch: DriftWatch | None = None
    """Re-runs drifted tools' tests when their dependency files change (status `drifted · failing`, tool_drifted recipes)."""

    @property
    def restricted(self) -> bool:
        return not self.trust.trusted

    @property
    def state(self) -> RuntimeState:
        """Restricted, or trusted with or without a model: the one question a front end asks."""
        from tui_agent.core.runtime_state import NoModel, Ready, Restricted

        if self.restricted:
            return Restricted(self, self.trust, self.agent)
        if self.agent is None:
            return NoModel(self, self.model_error or "no model is configured")
        return Ready(self, self.agent)

    @property
    def sandbox_tier(self) -> str | None:
        return self.sandbox.tier if self.sandbox is not None else None

    def resume(self, session_id: str) -> None:
        """Switch the agent to an earlier session (its messages and usage; appends go to its file)."""
        session = SessionLog.reopen(self.project, session_id)
        self._switch(session, load_messages(session.path), usage_from_session(session.path))

    def new_session(self) -> None:
        """Start a fresh conversation in a new session file (what /clear does)."""
        self._switch(SessionLog.create(self.project, model=self.model), [], UsageTotals())

    def _switch(self, session: SessionLog, messages: list[dict[str, Any]], usage: UsageTotals) -> None:
        if self.session is not None:
            self.session.close()
        self.session = session
        if self.agent is not None:
            self.agent.session, self.agent.messages, self.agent.usage = session, messages, usage
            self.agent.authored_names.clear()

    def store(self, kind: str) -> VersionedStore | None:
        """The versioned store of tools or of recipes (None when that part did not start)."""
        return self.versioned.get(kind)

    def stores(self) -> list[VersionedStore]:
        return list(self.versioned.values())

    def start_watching(self) -> None:
        """Run the project watcher in the background until `aclose` (outside edits, another process, git checkout)."""
        if self.watcher is not None and self.watch_task is None:
            self.watch_task = asyncio.create_task(self.watcher.run(), name="project-watcher")
            self.watch_task.add_done_callback(self._watcher_stopped)

    def _watcher_stopped(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            self.problems.append(f"the project watcher stopped: {task.exception()}")

    async def aclose(self) -> None:
        if self.trust.state == "this run":
            end_this_run(self.project)
        elif self.trust.state == "trusted":  # what this session authored is not news at the next open
            await asyncio.to_thread(tools_changed_since_last_seen, self.project)
        if self.watch_task is not None:
            self.watch_task.cancel()
            await asyncio.gather(self.watch_task, return_exceptions=True)
        if self.drift_watch is not None:
            await self.drift_watch.aclose()
        if self.agent is not None:
            await self.agent.client.aclose()
        if self.session is not None:
            self.session.close()
        for part in (self.mcp, self.recipes, self.catalog, self.sandbox):
            if part is not None:
                try:
                    await part.aclose()
                except Exception as error:  # closing must go on for the other parts
                    self.problems.append(f"closing {type(part).__name__}: {error}")


class StartupProgress:
    """What is still loading while a project opens; `listener` gets the pending parts after every change."""

    def __init__(self, listener: Callable[[tuple[str, ...]], None] | None, parts: Iterable[str]) -> None:
        self.listener = listener
        self.pending = list(parts)
        self._tell()

    def done(self, part: str) -> None:
        if part in self.pending:
            self.pending.remove(part)
            self._tell()

    def _tell(self) -> None:
        if self.listener is not None:
            self.listener(tuple(self.pending))


def load_sdk(model: str | None) -> str:
    """Import the model SDK (seconds on a busy machine: run in a thread) and return the model id to use."""
    from tui_agent.core.agent.model import sdk

    sdk()
    return model or default_model()


async def _start_parts(runtime: Runtime, progress: StartupProgress, *, sandbox_tier: str | None,
                       ask_init_git: AskInitGit | None, submit_prompt: SubmitPrompt | None) -> None:
    """Sandbox, then catalog, then recipes; a part that fails is reported in `problems` and the ones after it are skipped."""
    from tui_agent.core.catalog.api import Catalog
    from tui_agent.core.catalog.versioned import ToolVersions
    from tui_agent.core.recipes import open_recipes
    from tui_agent.core.recipes.versioned import RecipeVersions
    from tui_agent.core.sandbox import Sandbox
    from tui_agent.core.tending.drift_watch import DriftWatch
    from tui_agent.core.tending.suggestions import SuggestionBook

    project, settings = runtime.project, runtime.settings
    try:
        runtime.sandbox = await Sandbox.start(project, tier=sandbox_tier, min_level=settings.sandbox_min_level,
                                              project_venv=not runtime.restricted, settings=settings)
    except Exception as error:  # SandboxUnavailable, or bubblewrap failing in an unexpected way
        runtime.problems.append(f"sandbox unavailable: {error}; run_shell, run_python and catalog tools are disabled")
        return
    progress.done("sandbox")
    runtime.problems.extend(runtime.sandbox.notices)  # protected paths a run interrupted earlier had created
    toolchain = runtime.sandbox.toolchain
    runtime.problems.extend(f"sandbox toolchain: {problem}" for problem in (toolchain.problems if toolchain else ()))
    if runtime.restricted:  # the committed tools and recipes are listed, never imported, tested or run
        runtime.versioned.update(await asyncio.to_thread(preview_stores, project))
        progress.done("tool catalog")
        progress.done("recipes")
        return
    try:
        runtime.catalog = await Catalog.open(project, runtime.sandbox, ask_init_git=ask_init_git, changes=runtime.changes)
    except Exception as error:
        runtime.problems.append(f"tool catalog unavailable: {error}")
        return
    progress.done("tool catalog")
    tools = runtime.versioned["tool"] = ToolVersions(runtime.catalog)
    runtime.drift_watch = DriftWatch(runtime.catalog)
    runtime.suggestions = SuggestionBook(project.sessions_dir, runtime.catalog.state)
    runtime.watcher = ProjectWatcher(project, runtime.changes, on_tools=tools.outside_edit,
                                     on_files=runtime.drift_watch.files_changed)
    runtime.catalog.watcher = runtime.watcher
    runtime.problems.extend(runtime.catalog.state.notices)
    try:
        runtime.recipes = await open_recipes(project, runtime.catalog, runtime.catalog.git, submit_prompt=submit_prompt,
                                             permissions=runtime.permissions, changes=runtime.changes)
    except Exception as error:
        runtime.problems.append(f"recipes unavailable: {error}")
        return
    finally:
        progress.done("recipes")
    recipes = runtime.versioned["recipe"] = RecipeVersions(runtime.recipes)
    runtime.drift_watch.recipes = runtime.recipes
    runtime.watcher.on_recipes = recipes.outside_edit
    runtime.watcher.on_files = both(runtime.recipes.files_changed, runtime.drift_watch.files_changed)
    runtime.recipes.watcher = runtime.watcher


def both(*callbacks: Callable[[Iterable[str]], None]) -> Callable[[Iterable[str]], None]:
    """One `on_files` callback that hands the same paths to each of `callbacks`."""
    def call(paths: Iterable[str]) -> None:
        changed = list(paths)
        for callback in callbacks:
            callback(changed)
    return call


async def _start_mcp(runtime: Runtime, starting: asyncio.Task[McpHub]) -> None:
    """The MCP servers of `.mcp.json` and `[mcp.servers]` (started meanwhile); one that fails is a problem shown."""
    from tui_agent.core.mcp.sandbox_bridge import attach_to_sandbox

    try:
        runtime.mcp = await starting
    except Exception as error:
        runtime.problems.append(f"MCP servers unavailable: {error}")
        return
    attach_to_sandbox(runtime.mcp, runtime.permissions, runtime.sandbox)
    runtime.problems.extend(runtime.mcp.failures())


def usage_from_session(path: Path) -> UsageTotals:
    record = load_usage(path)
    return UsageTotals(int(record["input_tokens"]), int(record["output_tokens"]), int(record["cache_read_tokens"]),
                       int(record["cache_write_tokens"]), record["cost_usd"])


def model_configured(api_key: str | None, base_url: str | None) -> bool:
    return bool(api_key or base_url or os.environ.get("ANTHROPIC_API_KEY") or os.environ.get("ANTHROPIC_AUTH_TOKEN")
                or os.environ.get("ANTHROPIC_BASE_URL"))


async def open_runtime(
    project_root: str | Path,
    *,
    approve: ApprovalCallback,
    model: str | None = None,
    ask_init_git: Callable[[Project], bool | Awaitable[bool]] | None = None,
    sandbox_tier: str | None = None,
    resume: str | None = None,
    continue_latest: bool = False,
    permission_mode: str | None = None,
    allowed_tools: Iterable[str] = (),
    denial_hint: str = "",
    base_url: str | None = None,
    api_key: str | None = None,
    submit_prompt: SubmitPrompt | None = None,
    max_retries: int = 4,
    retry_base_delay_s: float = 1.0,
    watch: bool = True,
    progress: Callable[[tuple[str, ...]], None] | None = None,
    trust_project: bool = False,
) -> Runtime:
    """Open a project (a failing part is reported in `problems`, the rest still works); the SDK is imported in a thread
    meanwhile and `progress` told what is still loading. Without `watch`, `runtime.watcher.run()` is the caller's.

    An untrusted project opens restricted (`runtime.restricted`; `problems` says why and how to trust it);
    `trust_project` trusts it for this run only (`--trust-project`), recording nothing."""
    runtime = _new_runtime(Project.at(project_root), approve, model=model, permission_mode=permission_mode,
                           allowed_tools=allowed_tools, denial_hint=denial_hint, trust_project=trust_project)
    project, settings = runtime.project, runtime.settings
    wants_model = model_configured(api_key, base_url)
    tracker = StartupProgress(progress, ("sandbox", "tool catalog", "recipes", *(("model client",) if wants_model else ())))
    # The session first: a wrong --resume id fails before any process or thread is started.
    messages, usage = (await asyncio.to_thread(_reopen, runtime, resume or latest_session_id(project))  # off the loop:
                       if resume or continue_latest else ([], UsageTotals()))  # a long session takes a while to decode
    sdk_loading = _model_choice(model or settings.model, wants_model)
    mcp_starting = _mcp_hub_starting(project, not runtime.restricted)  # alongside the sandbox and the catalog
    try:
        try:
            await _start_parts(runtime, tracker, sandbox_tier=sandbox_tier, ask_init_git=ask_init_git,
                               submit_prompt=submit_prompt)
        finally:
            await _start_mcp(runtime, mcp_starting)
        if watch:  # live (its OS watch set up on another core) by the first request, which waits for it
            runtime.start_watching()
        chosen_model = runtime.model = await sdk_loading
        if not runtime.resumed:
            runtime.session = SessionLog.create(project, model=chosen_model)
    except BaseException:
        if not sdk_loading.done():
            sdk_loading.cancel()
        await runtime.aclose()
        raise
    runtime.undo = await asyncio.to_thread(open_undo, runtime)
    if not wants_model:
        runtime.model_error = f"No model is configured. {configuration_hint()} The catalog, diffs, history and manual tool runs work without one."
        return runtime
    client = ModelClient(model=chosen_model, api_key=api_key, base_url=configured_base_url(base_url),
                         max_retries=max_retries, retry_base_delay_s=retry_base_delay_s)
    _attach_agent(runtime, client, messages, usage)
    tracker.done("model client")
    return runtime


def _new_runtime(project: Project, approve: ApprovalCallback, *, model: str | None, permission_mode: str | None,
                 allowed_tools: Iterable[str], denial_hint: str, trust_project: bool = False) -> Runtime:
    """The project's trust, settings and permissions, nothing started yet (a broken config raises ConfigError here)."""
    settings = project.load_settings()
    status = trust_for_this_run(project) if trust_project else check(project)
    project.ensure_layout()
    permissions = project_permissions(project, settings, status, approve, permission_mode=permission_mode,
                                      allowed_tools=allowed_tools, denial_hint=denial_hint)
    effective = settings if status.trusted else restricted_settings(settings)
    runtime = Runtime(project=project, settings=effective, permissions=permissions, model=model or settings.model or "",
                      trust=status)
    if status.state == "trusted" and (pulled := tools_changed_since_last_seen(project)):
        runtime.problems.append(f"new or changed since you last opened this project (a pull, an outside edit): tools "
                                f"{', '.join(pulled)}; they run sandboxed, look them over in the catalog pane")
    if not status.trusted:
        runtime.problems.extend(restricted_notes(settings, status))
        if ignored_grants(settings):  # a refusal says why the project's own rules did not apply, and how they would
            permissions.denial_hint = (f"{permissions.denial_hint} The project's own permission grants are ignored "
                                       "until it is trusted (`tuiagent trust`).").strip()
    runtime.problems.extend(permissions.problems)
    return runtime


def _model_choice(model: str | None, wants_model: bool) -> asyncio.Future[str]:
    """The model id to use, known once the SDK is imported in a thread; with no model configured the SDK is not
    imported at all (seconds of CPU the catalog and the sandbox would otherwise share the machine with)."""
    if wants_model:
        return asyncio.ensure_future(asyncio.to_thread(load_sdk, model))
    chosen: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    chosen.set_result(model or "")
    return chosen


def _mcp_hub_starting(project: Project, trusted: bool) -> asyncio.Task[McpHub]:
    """The project's MCP servers starting (a restricted project's are listed, none started)."""
    from tui_agent.core.mcp.hub import McpHub

    return asyncio.create_task(McpHub.start(project) if trusted else held_mcp_hub(project))


def _reopen(runtime: Runtime, session_id: str) -> tuple[list[dict[str, Any]], UsageTotals]:
    """Resume a session: its file becomes the runtime's, its messages and usage the agent's."""
    session = SessionLog.reopen(runtime.project, session_id)
    runtime.resumed, runtime.session = True, session
    return load_messages(session.path), usage_from_session(session.path)


def _attach_agent(runtime: Runtime, client: ModelClient, messages: list[dict[str, Any]], usage: UsageTotals) -> None:
    assert runtime.session is not None
    runtime.agent = Agent(project=runtime.project, settings=runtime.settings, client=client, permissions=runtime.permissions,
                          session=runtime.session, sandbox=runtime.sandbox, catalog=runtime.catalog,
                          recipes=runtime.recipes, messages=messages, usage=usage, changes=runtime.changes,
                          watcher=runtime.watcher, tool_providers=_mcp_providers(runtime))
    runtime.agent.recorder = runtime.undo


def open_undo(runtime: Runtime) -> UndoService | None:
    """The undo service of the project, or None (with a problem noted) when it is not in a git work tree."""
    checkpoints = Checkpoints.open(runtime.project.root)
    if checkpoints is None:
        runtime.problems.append("no git repository: turns are not checkpointed, so /undo, /rewind and /diff are unavailable")
        return None
    return UndoService(checkpoints, catalog=runtime.catalog, recipes=runtime.recipes)


def _mcp_providers(runtime: Runtime) -> list[ToolProvider]:
    from tui_agent.core.mcp.agent_tools import McpToolProvider

    trusted = not runtime.restricted
    return [McpToolProvider(runtime.mcp)] if trusted and runtime.mcp is not None and runtime.mcp.connections else []
