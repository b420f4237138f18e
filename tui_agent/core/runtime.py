"""open_runtime(): wires project, settings, sandbox, catalog, recipes, permissions, session and agent (CLI and TUI alike)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.core.agent.instructions import glance_early, refused_instructions, system_line
from tui_agent.core.agent.loop import Agent
from tui_agent.core.agent.model import ModelClient, configuration_hint, configured_base_url
from tui_agent.core.agent.permissions import ApprovalCallback
from tui_agent.core.agent.pricing import UsageTotals, default_model
from tui_agent.core.agent.session_turns import load_turns
from tui_agent.core.agent.sessions import SessionLog, latest_session_id
from tui_agent.core.changes import ChangeFeed
from tui_agent.core.outside_git import project_for
from tui_agent.core.project import Project
from tui_agent.core.runtime_restricted import project_permissions, restricted_notes
from tui_agent.core.runtime_start import StartupProgress, start_parts
from tui_agent.core.runtime_state import Core, NoModel, Ready, Restricted, Runtime, Workshop, catalog_of, recipes_of, usage_from_session
from tui_agent.core.trust.check import check, tools_changed_since_last_seen, trust_for_this_run
from tui_agent.core.trust.restrict import ignored_grants, restricted_settings
from tui_agent.core.undo.service import UndoService
from tui_agent.core.versioning.checkpoints import Checkpoints

__all__ = ["Core", "NoModel", "Ready", "Restricted", "Runtime", "Workshop", "open_runtime", "usage_from_session"]

if TYPE_CHECKING:
    from tui_agent.core.catalog.api import AskInitGit, Catalog
    from tui_agent.core.agent.providers import ToolProvider
    from tui_agent.core.mcp.hub import McpHub
    from tui_agent.core.protocols import Model
    from tui_agent.core.recipes.seams import SubmitPrompt
    from tui_agent.core.settings import Settings
    from tui_agent.core.agent.turns import Turn


def load_sdk(model: str | None) -> str:
    """Import the model SDK (seconds on a busy machine: run in a thread) and return the model id to use."""
    from tui_agent.core.agent.model import sdk

    sdk()
    return model or default_model()


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
    thinking: str | None = None,
    effort: str | None = None,
    prestart_sandbox: bool = True,
    early_glance: bool = False,
    client: Model | None = None,
) -> Runtime:
    """Open a project (a failing part is reported in `problems`, the rest still works); the SDK is imported in a thread
    meanwhile and `progress` told what is still loading. Without `watch`, `runtime.workshop.watcher.run()` is the caller's.

    An untrusted project opens `Restricted` (`problems` says why and how to trust it); a trusted one `NoModel` or
    `Ready`. `trust_project` trusts it for this run only (`--trust-project`), recording nothing. `thinking` and
    `effort` (--thinking/--effort) take the place of the `[agent]` settings of those names. `early_glance`: the first
    request follows at once (headless), so the environment's `git status`/`git log` start now, in a thread. `client`:
    the model to talk to in place of the Messages API client (the SDK is then not imported); `model` still names it."""
    core = _new_core(await project_for(project_root, ask_init_git), approve, model=model, permission_mode=permission_mode,
                     allowed_tools=allowed_tools, denial_hint=denial_hint, trust_project=trust_project,
                     thinking=thinking, effort=effort)
    core.prestart_sandbox = prestart_sandbox  # False: the caller calls `sandbox.prestart()` when it suits it
    wants_model = client is not None or model_configured(api_key, base_url)
    tracker = StartupProgress(progress, ("sandbox", "tool catalog", "recipes", *(("model client",) if wants_model else ())))
    # The session first: a wrong --resume id fails before any process or thread is started.
    turns, usage = (await asyncio.to_thread(_reopen, core, resume or latest_session_id(core.project))  # off the loop:
                       if resume or continue_latest else ([], UsageTotals()))  # a long session takes a while to decode
    if early_glance and wants_model:
        glance_early(core.project.root)
    opening: Runtime = (NoModel(core, Workshop(), "") if core.trust.trusted else Restricted(core, {}))
    await _start_alongside_sdk(opening, tracker, _model_choice(model or core.settings.model, wants_model, client), watch=watch,
                               sandbox_tier=sandbox_tier, ask_init_git=ask_init_git, submit_prompt=submit_prompt)
    if not wants_model:
        return _without_model(opening)
    client = _model_client(core, client, api_key=api_key, base_url=base_url, retries=(max_retries, retry_base_delay_s))
    ready = _with_agent(opening, _agent(opening, client, turns, usage))
    tracker.done("model client")
    return ready


async def _start_alongside_sdk(opening: Runtime, tracker: StartupProgress, sdk_loading: asyncio.Future[str], *,
                               watch: bool, sandbox_tier: str | None, ask_init_git: AskInitGit | None,
                               submit_prompt: SubmitPrompt | None) -> None:
    """Start the project's parts and its undo while the SDK imports (`sdk_loading`, the model id once it has) and the
    system line is made; then `core.model` is that id and a fresh session is created unless one was resumed. On any failure the
    pending threads are given up and what was started is closed."""
    core = opening.core
    system_known = asyncio.ensure_future(asyncio.to_thread(system_line))  # its `uname -p` while the SDK imports
    try:
        await start_parts(opening, tracker, sandbox_tier=sandbox_tier, ask_init_git=ask_init_git,
                           submit_prompt=submit_prompt)
        if watch:  # live (its OS watch set up on another core) by the first request, which waits for it
            opening.start_watching()
        await _open_undo(core, opening)  # its git runs while the SDK imports, not after
        core.model = await sdk_loading
        await system_known
        if not core.resumed:
            core.session = SessionLog.create(core.project, model=core.model)
    except BaseException:
        for pending in (sdk_loading, system_known):
            if not pending.done():
                pending.cancel()
        await opening.aclose()
        raise


async def _open_undo(core: Core, opening: Runtime) -> None:
    """The undo service (an undo a killed process left part-way finished first) and a detached HEAD said."""
    core.undo = await asyncio.to_thread(open_undo, core, opening)
    if core.undo is not None and (finished := await core.undo.finish_interrupted()):
        core.problems.append(finished)
    if (catalog := catalog_of(opening)) is not None and (detached := await asyncio.to_thread(_detached_head, catalog)):
        core.problems.append(detached)


def _without_model(opening: Runtime) -> Runtime:
    """The opened project with no model configured: `model_error` says how to configure one."""
    opening.core.model_error = (f"No model is configured. {configuration_hint()} The catalog, diffs, history and manual "
                                "tool runs work without one.")
    if isinstance(opening, NoModel):
        opening.reason = opening.core.model_error
    return opening


def _with_agent(opening: Runtime, agent: Agent) -> Runtime:
    """A restricted project keeps its state with an agent added; a trusted one becomes `Ready`."""
    if isinstance(opening, Restricted):
        opening.agent = agent
        return opening
    assert isinstance(opening, NoModel)
    return Ready(opening.core, opening.workshop, agent)


def _new_core(project: Project, approve: ApprovalCallback, *, model: str | None, permission_mode: str | None,
              allowed_tools: Iterable[str], denial_hint: str, trust_project: bool = False, thinking: str | None = None,
              effort: str | None = None) -> Core:
    """The project's trust, settings and permissions, nothing started yet (a broken config raises ConfigError here)."""

    settings = project.load_settings()
    status = trust_for_this_run(project) if trust_project else check(project)
    project.ensure_layout()
    permissions = project_permissions(project, settings, status, approve, permission_mode=permission_mode,
                                      allowed_tools=allowed_tools, denial_hint=denial_hint)
    core = Core(project=project, settings=_effective_settings(settings, status.trusted, thinking, effort),
                permissions=permissions, trust=status,
                model=model or settings.model or "", changes=ChangeFeed())
    if status.state == "trusted" and (pulled := tools_changed_since_last_seen(project)):
        core.new_tools = tuple(pulled)
        core.problems.append(f"new or changed since you last opened this project (a pull, an outside edit): tools "
                             f"{', '.join(pulled)}; they run sandboxed, look them over in the catalog pane")
    if not status.trusted:
        core.problems.extend(restricted_notes(core.project, settings, status))
        if ignored_grants(settings):  # a refusal says why the project's own rules did not apply, and how they would
            permissions.denial_hint = (f"{permissions.denial_hint} The project's own permission grants are ignored "
                                       "until it is trusted (`tuiagent trust`).").strip()
    core.problems.extend(permissions.problems)
    core.problems.extend(refused_instructions(project.root))
    return core


def _effective_settings(settings: Settings, trusted: bool, thinking: str | None, effort: str | None) -> Settings:
    """The settings a session runs with: an untrusted project's grants left out, and --thinking/--effort in the place
    of the `[agent]` settings of those names."""
    effective = settings if trusted else restricted_settings(settings)
    if thinking or effort:
        effective = effective.model_copy(update={"thinking": thinking or effective.thinking, "effort": effort or effective.effort})
    return effective


def _model_choice(model: str | None, wants_model: bool, client: Model | None = None) -> asyncio.Future[str]:
    """The model id to use, known once the SDK is imported in a thread; with no model configured, or a model client
    given, the SDK is not imported at all (seconds of CPU the catalog and the sandbox would otherwise share the machine
    with): the given client's own name is the default."""
    if wants_model and client is None:
        return asyncio.ensure_future(asyncio.to_thread(load_sdk, model))
    chosen: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    chosen.set_result(model or (client.model if client is not None else ""))
    return chosen


def _model_client(core: Core, given: Model | None, *, api_key: str | None, base_url: str | None,
                  retries: tuple[int, float]) -> Model:
    """The model handed in, under the name chosen for this run, or the Messages API's client for that name."""
    if given is None:
        return ModelClient(model=core.model, api_key=api_key, base_url=configured_base_url(base_url),
                           max_retries=retries[0], retry_base_delay_s=retries[1])
    given.model = core.model
    return given


def _reopen(core: Core, session_id: str) -> tuple[list[Turn], UsageTotals]:
    """Resume a session: its file becomes the runtime's, its turns and usage the agent's."""
    session = SessionLog.reopen(core.project, session_id)
    core.resumed, core.session = True, session
    return load_turns(session.path), usage_from_session(session.path)


def _agent(opening: Runtime, client: Model, turns: list[Turn], usage: UsageTotals) -> Agent:
    """The agent: a restricted project's has only the built-in tools (no catalog, recipes or MCP tools)."""
    core = opening.core
    assert core.session is not None
    workshop = opening.workshop if not isinstance(opening, Restricted) else Workshop()
    agent = Agent(project=core.project, settings=core.settings, client=client, permissions=core.permissions,
                  session=core.session, sandbox=core.sandbox, catalog=workshop.catalog, recipes=workshop.recipes,
                  turns=turns, usage=usage, changes=core.changes, watcher=workshop.watcher,
                  tool_providers=_mcp_providers(workshop.mcp), trusted=not isinstance(opening, Restricted))
    agent.recorder = core.undo
    if core.undo is not None:
        core.undo.writes_nothing = agent.executor.writes_nothing
    return agent


def open_undo(core: Core, opening: Runtime) -> UndoService | None:
    """The undo service of the project, or None (with a problem noted) when it is not in a git work tree."""
    checkpoints = Checkpoints.open(core.project.root)
    if checkpoints is None:
        core.problems.append(_no_repository())
        return None
    return UndoService(checkpoints, catalog=catalog_of(opening), recipes=recipes_of(opening),
                       ignored=core.sandbox.runs if core.sandbox is not None else None)


def _no_repository() -> str:
    """Why undo is off: no repository, or one named only by GIT_DIR/GIT_WORK_TREE (not followed: refused, said)."""
    named = [name for name in ("GIT_DIR", "GIT_WORK_TREE") if os.environ.get(name)]
    if named:
        return (f"{' and '.join(named)} {'is' if len(named) == 1 else 'are'} set: tuiagent finds the repository from "
                "the project folder and does not follow them, so turns are not checkpointed (/undo, /rewind and /diff "
                "are unavailable) and tools are not committed; unset them and open the project from a checkout "
                "(a clone or a `git worktree`)")
    return "no git repository: turns are not checkpointed, so /undo, /rewind and /diff are unavailable"


def _detached_head(catalog: Catalog) -> str | None:
    """Said at open: on a detached HEAD the catalog's commits wait (tools still save and run), so none is missed."""
    reason = catalog.git.status().reason
    if reason is None or not reason.startswith("HEAD is detached"):
        return None
    return ("HEAD is detached: new and changed tools and recipes are saved and run, and their commits are deferred "
            "until you check out a branch (`tuiagent tools commit` then, or the next catalog change, commits them)")


def _mcp_providers(hub: McpHub | None) -> list[ToolProvider]:
    if hub is None or not hub.connections:  # no server connected: the MCP tool code is not imported
        return []
    from tui_agent.core.mcp.agent_tools import McpToolProvider

    return [McpToolProvider(hub)]
