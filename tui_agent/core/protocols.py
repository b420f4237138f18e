"""The seams between the agent loop and its parts, as typing Protocols: the model, the sandbox, the catalog, the recipes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Protocol

from tui_agent.core.content import ApiMessage, JsonObject, TextBlock, ToolDefinition
from tui_agent.core.events import Event

if TYPE_CHECKING:
    from tui_agent.core.agent.sessions import SessionLog
    from tui_agent.core.agent.model import ModelReply
    from tui_agent.core.agent.thinking import ThinkingConfig
    from tui_agent.core.catalog.models import ToolRecord, ToolSpec
    from tui_agent.core.catalog.registry import Registry
    from tui_agent.core.catalog.state import StateStore
    from tui_agent.core.recipes.model import RecipeRecord
    from tui_agent.core.sandbox import NetworkGrant, RunResult, SandboxPolicy, ShellCommand, Snippet
    from tui_agent.core.versioning.store_interface import Change


class Model(Protocol):
    """What the agent needs of a model: one streamed reply per request, then its ModelReply (or a ModelError)."""

    model: str
    base_url: str
    max_tokens: int

    def stream_reply(
        self, *, system: list[TextBlock], tools: list[ToolDefinition], messages: list[ApiMessage],
        thinking: ThinkingConfig | None = None,
    ) -> AsyncIterator[Event | ModelReply]: ...

    async def aclose(self) -> None: ...


class AgentSandbox(Protocol):
    """What the agent needs of the sandbox (core.sandbox.Sandbox): run a command or Python under a policy, stop what runs."""

    @property
    def tier(self) -> str:
        """"bubblewrap" or "rlimits": only bubblewrap can keep the project read-only."""
        ...

    @property
    def policy(self) -> SandboxPolicy:
        """The default policy of a run."""
        ...

    @property
    def notices(self) -> Sequence[str]:
        """Protected paths agent code created and the sandbox moved to `.agent/quarantine/`, oldest first."""
        ...

    async def run(self, program: ShellCommand | Snippet, policy: SandboxPolicy | None = None, *,
                  on_output: Callable[[bytes], None] | None = None) -> RunResult:
        """Run a shell command or a snippet under `policy`; `on_output` hears its output as it comes."""
        ...

    async def cancel_running(self) -> None: ...

    def network_grant(self) -> NetworkGrant:
        """What a shell command granted the network reaches: the names of `[sandbox] network`, or any public name."""
        ...

    def program_notes(self, command: str) -> list[str]:
        """What an approval of shell `command` must say (a program from the project's virtualenv, not the system's)."""
        ...


class AgentCatalog(Protocol):
    """What the agent needs of the versioned tool catalog (core.catalog.Catalog): list, author, prune, call."""

    @property
    def registry(self) -> Registry:
        """The tools loaded now (their last good spec, or the error of a broken file)."""
        ...

    @property
    def state(self) -> StateStore:
        """Usage counts and suggestions (state.db)."""
        ...

    @property
    def failing_drift(self) -> dict[str, str]:
        """Drifted tools whose tests fail → the source_sha they failed at."""
        ...

    def get(self, name: str) -> ToolRecord | None: ...
    def spec(self, name: str) -> ToolSpec | None: ...
    def search(self, query: str, limit: int = 20) -> list[ToolSpec]: ...
    def commit_blocker(self) -> str | None: ...
    async def save(self, name: str, source: str, *, author: str = "agent") -> Change: ...
    async def prune(self, name: str) -> Change: ...

    async def call_tool(self, name: str, args: JsonObject, *, allow_network: bool = False,
                        allow_writes: bool = False, policy: SandboxPolicy | None = None) -> RunResult: ...

    async def call_tools(self, calls: list[tuple[str, JsonObject]]) -> list[RunResult]:
        """`call_tool` of each (no grant, the project read-only), all in one sandboxed run."""
        ...

    async def run_python(self, code: str, *, allow_writes: bool = False, policy: SandboxPolicy | None = None) -> RunResult: ...


class AgentRecipes(Protocol):
    """What the agent needs of the recipe store (core.recipes.RecipeEngine): look one up, save one."""

    def get(self, name: str) -> RecipeRecord | None: ...
    async def save_recipe(self, name: str, source: str, *, author: str = "agent") -> RecipeRecord: ...


class TurnRecorder(Protocol):
    """Told when a turn begins and ends, and of each of its events (core/undo/service.py); `end` may come twice."""

    problems: list[str]
    """Checkpoints that failed since the agent last looked; it tells the person and empties the list."""

    async def begin(self, session: SessionLog, prompt: str) -> None: ...
    def observe(self, event: Event) -> None: ...
    async def around_call(self, event: Event) -> None: ...  # each ToolCallStarted (call not run yet) and ToolCallFinished
    async def end(self, session: SessionLog) -> None: ...
