"""How the UI opens the core runtime: `open_runtime` with the UI's callbacks and the CLI's launch options."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from tui_agent.core.bulkload import import_in_bulk

if TYPE_CHECKING:  # the core itself is imported in a thread (below)
    from tui_agent.core.agent.permissions import ApprovalAnswer, ApprovalRequest
    from tui_agent.core.project import Project
    from tui_agent.core.protocols import Model
    from tui_agent.core.runtime import Runtime


NO_MODEL = "\n".join([
    "No model is configured, so the agent is off. The catalog, diffs, history and manual tool runs all work.",
    "To talk to Claude: export ANTHROPIC_API_KEY=sk-ant-…",
    "For a local model: export ANTHROPIC_BASE_URL=http://127.0.0.1:11434 (any server speaking the Messages API: "
    "Ollama ≥ 0.14, llama-server, vLLM, LM Studio, LiteLLM), and set `model = \"…\"` in .agent/config.toml.",
    "Then restart tuiagent.",
])
"""What the UI says when the project opened without a model (at start, and when a command needs one)."""


@dataclass(frozen=True)
class UICallbacks:
    """What the runtime needs from a person, answered by the app with modals, and the recipes' prompt hand-off."""

    approve: Callable[[ApprovalRequest], Awaitable[bool | ApprovalAnswer]]
    ask_init_git: Callable[[Project], Awaitable[bool]]
    submit_prompt: Callable[[str], Awaitable[None]]
    progress: Callable[[tuple[str, ...]], None] | None = None


@dataclass(frozen=True)
class LaunchOptions:
    """The CLI flags that shape the runtime (all optional), and the model to talk to when it is not the Messages API's
    client (an in-process model: `client`, which the CLI never sets)."""

    model: str | None = None
    resume: str | None = None
    continue_latest: bool = False
    permission_mode: str | None = None
    sandbox_tier: str | None = None
    allowed_tools: tuple[str, ...] = ()
    approve_all: bool = False
    init_git: bool = False
    extra: dict[str, Any] = field(default_factory=dict)
    client: Model | None = None


class RuntimeOpener(Protocol):
    def __call__(self, root: Path, callbacks: UICallbacks, options: LaunchOptions) -> Awaitable[Runtime]: ...


async def open_runtime_for_ui(root: Path, callbacks: UICallbacks, options: LaunchOptions) -> Runtime:
    """The real runtime (project, settings, sandbox, catalog, recipes, agent) for `root`.

    The core is imported in a thread: its imports must not hold up the event loop that paints the screen.
    """
    module = await asyncio.to_thread(import_in_bulk, "tui_agent.core.runtime")
    runtime: Runtime = await module.open_runtime(
        root,
        approve=callbacks.approve,
        ask_init_git=callbacks.ask_init_git,
        submit_prompt=callbacks.submit_prompt,
        progress=callbacks.progress,
        model=options.model,
        resume=options.resume,
        continue_latest=options.continue_latest,
        permission_mode=options.permission_mode,
        sandbox_tier=options.sandbox_tier,
        allowed_tools=options.allowed_tools,
        client=options.client,
        prestart_sandbox=False,  # RuntimeLifecycle starts it once a prompt typed meanwhile has reached the model
        **options.extra,
    )
    return runtime

