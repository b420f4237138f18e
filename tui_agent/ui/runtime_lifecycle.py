"""The project's runtime over the app's life: opened after the first frame (git and trust questions first), reopened by /trust, closed on quit."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from tui_agent.ui.runtime_bridge import LaunchOptions, RuntimeOpener, UICallbacks
from tui_agent.ui.first_request import after_first_request
from tui_agent.ui.runtime_ready import show_runtime
from tui_agent.core.runtime_state import agent_of

if TYPE_CHECKING:  # the core is imported in a thread after the first frame (runtime_bridge)
    from tui_agent.core.project import Project
    from tui_agent.core.runtime import Runtime
    from tui_agent.core.runtime_state import RuntimeState
    from tui_agent.ui.catalog_sync import CatalogSync
    from tui_agent.ui.host import ConversationView, UIHost
    from tui_agent.ui.turn import TurnRunner


class SettleTrust(Protocol):
    """The trust screen before the project opens, for an untrusted (or changed) project (ui/screens/trust.py)."""

    def __call__(self, root: Path, *, trust_for_run: bool) -> Awaitable[None]: ...


class RuntimeLifecycle:
    """Opens the runtime (a failure is said in the conversation, the UI stays up), reopens and closes it, and answers
    what state it is in: Opening until it is up."""

    def __init__(self, host: UIHost, opener: RuntimeOpener, *, turns: TurnRunner, catalog_sync: CatalogSync,
                 view: Callable[[], ConversationView], settle_trust: SettleTrust, quit: Callable[[str], None]) -> None:
        self.host = host
        self.opener = opener
        self.turns = turns
        self.catalog_sync = catalog_sync
        self.view = view
        """The conversation, emptied when a reopen shows the resumed session again."""
        self.settle_trust = settle_trust
        self.quit = quit
        """End the app with a last line for the terminal."""
        self.requested_model = host.options.model
        self.runtime: Runtime | None = None
        self.error: str | None = None
        """Why the runtime did not open (None while it opens, or once it is up)."""
        self.ready = asyncio.Event()
        """Set once an open has finished, either way."""
        self.git_declined = False

    async def open(self) -> Runtime | None:
        """The first open: the outside-git question, the trust screen, the runtime; prompts typed meanwhile are sent,
        or handed back to the prompt box when there is no agent to take them."""
        from tui_agent.ui.screens.git_question import outside_git_answer

        host = self.host
        answer = await outside_git_answer(host.ask, host.project_root, host.options.init_git)
        if answer == "quit":
            self.quit(f"tuiagent: nothing was created in {host.project_root}.")
            return None
        if answer == "create":
            host.options = replace(host.options, init_git=True)
        self.git_declined = answer == "without"  # the core's own question (ask_init_git) is answered with this
        runtime = await self.start(host.options, "Could not open the project", settle=True)
        if runtime is None or agent_of(runtime) is None:
            await self.turns.hand_back_queued()
        else:
            self.turns.send_queued()
        return runtime

    def show_loading(self, pending: tuple[str, ...]) -> None:
        """The runtime's startup progress: what is still loading, in the header."""
        self.host.loading = ", ".join(pending)

    async def start(self, options: LaunchOptions, failure: str, *, settle: bool = False,
                    clear_conversation: bool = False) -> Runtime | None:
        """Open the runtime with `options` (after the trust screen when `settle`); None, said in the conversation, when it fails."""
        from tui_agent.core.config_error import ConfigError

        host = self.host
        callbacks = UICallbacks(approve=self.turns.approve, ask_init_git=self.ask_init_git, submit_prompt=self.turns.submit_prompt,
                                progress=self.show_loading)
        try:
            if settle:
                await self.settle_trust(host.project_root, trust_for_run=bool(host.options.extra.get("trust_project")))
            runtime = await self.opener(host.project_root, callbacks, options)
        except ConfigError as exc:  # one precise line: file:line, what is wrong, how to fix it
            self.error = f"{exc} (fix the file and start tuiagent again)"
        except Exception as exc:  # the UI stays up and says what went wrong
            self.error = f"{type(exc).__name__}: {exc}"
        else:
            if clear_conversation:
                await self.view().clear()  # runtime_ready shows the resumed session again, from its file
            self.runtime, host.loading = runtime, ""
            await show_runtime(host, runtime, turns=self.turns, catalog_sync=self.catalog_sync)
            host.run_worker(self._prestart_sandbox(runtime), group="sandbox-prestart")
            self.ready.set()
            return runtime
        host.loading = ""
        await host.add_notice(f"{failure}: {self.error}", "error")
        self.ready.set()
        return None

    async def _prestart_sandbox(self, runtime: Runtime) -> None:
        """The sandbox's warm workers, once a prompt typed while the project opened reached the model."""
        await after_first_request(self.turns, agent_of(runtime))
        if runtime.core.sandbox is not None and runtime is self.runtime:
            runtime.core.sandbox.prestart()

    async def reopen(self, options: LaunchOptions, *, clear_conversation: bool) -> Runtime | None:
        """Close the runtime and open the project again with `options` (/trust); the UI sees Opening meanwhile."""
        old = self.runtime
        self.runtime, self.error, self.host.loading = None, None, "the project"
        self.catalog_sync.runtime = None  # no refresh reads the closed stores
        self.ready.clear()
        if old is not None:
            await old.aclose()
        return await self.start(options, "Could not reopen the project", clear_conversation=clear_conversation)

    async def ask_init_git(self, project: Project | None = None) -> bool:
        """The core's question before it creates a repository (asked once: the answer before anything was written stands)."""
        from tui_agent.ui.screens.git_question import init_git_answer

        options = self.host.options
        if options.init_git or self.git_declined:
            return options.init_git
        return await init_git_answer(self.host.ask, project.root if project is not None else self.host.project_root)

    @property
    def state(self) -> RuntimeState:
        """The one question for the rest of the UI: opening, restricted, trusted without a model, or ready."""
        if self.runtime is None:
            from tui_agent.core.runtime_state import Opening

            return Opening(self.error)
        return self.runtime

    @property
    def opening(self) -> bool:
        return self.runtime is None and not self.ready.is_set()

    def model_name(self) -> str:
        runtime = self.runtime
        if runtime is None or (agent := agent_of(runtime)) is None:
            return "no model"
        return agent.model or runtime.core.model or self.requested_model or "default"

    def farewell(self) -> str:
        """The line printed once the screen is gone: where the conversation is kept and how to come back to it."""
        session = self.runtime.core.session if self.runtime is not None else None
        if session is None or not session.path.exists():
            return "tuiagent: nothing to resume from this run."
        return f"tuiagent: session {session.id} is kept; `tuiagent --resume {session.id}` (or --continue) goes on with it."

    async def close(self) -> None:
        """Close the runtime as the app quits (within 5 s, and never failing: closing must not block quitting)."""
        if self.runtime is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.runtime.aclose(), timeout=5)
