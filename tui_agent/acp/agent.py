"""The ACP agent: initialize, session/new, session/prompt, session/cancel and session/set_mode on tuiagent's runtime."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, RequestError
from acp.schema import (AgentCapabilities, Implementation, InitializeResponse, LoadSessionResponse, McpCapabilities,
                        NewSessionResponse,
                        PromptCapabilities, PromptResponse, SessionCapabilities, SetSessionModeResponse)

from tui_agent.core.errors import PROJECT_FAILURES
from tui_agent.acp.approvals import AcpApprovals
from tui_agent.acp.prompts import prompt_text
from tui_agent.acp.servers import client_servers
from tui_agent.acp.session import AcpSession, modes
from tui_agent.core.runtime_state import agent_of

if TYPE_CHECKING:
    from acp.interfaces import Client

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class AcpOptions:
    """What `tuiagent acp` was started with: the project it serves and the runtime's flags."""

    project: Path
    model: str | None = None
    sandbox_tier: str | None = None
    trust_project: bool = False
    permission_mode: str | None = None


def _version() -> str:
    try:
        return metadata.version("tuiagent")
    except metadata.PackageNotFoundError:
        return "0"


class TuiAgentAcp:
    """Sessions each open their own runtime on the project (sandbox, catalog, recipes, the project's MCP servers)."""

    def __init__(self, options: AcpOptions) -> None:
        self.options = options
        self.client: Client | None = None
        self.sessions: dict[str, AcpSession] = {}
        self.reads_buffers = False
        """The client offered fs/read_text_file: read_file shows the editor's unsaved text."""

    def on_connect(self, conn: Client) -> None:
        self.client = conn

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> InitializeResponse:
        """Version 1 is the only one spoken: a client asking for another gets 1, and may disconnect (the spec's rule).
        Images, audio, embedded context and SSE MCP servers are not offered; streamable-HTTP ones are."""
        fs = getattr(client_capabilities, "fs", None)
        self.reads_buffers = bool(getattr(fs, "read_text_file", False))
        capabilities = AgentCapabilities(load_session=True, prompt_capabilities=PromptCapabilities(
            image=False, audio=False, embedded_context=False), mcp_capabilities=McpCapabilities(http=True, sse=False),
            session_capabilities=SessionCapabilities())
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=capabilities, auth_methods=[],
                                  agent_info=Implementation(name="tuiagent", title="tuiagent", version=_version()))

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        session = await self._open(cwd, mcp_servers or [], resume=None)
        session.announce_commands()
        return NewSessionResponse(session_id=session.session_id, modes=modes(session.agent.permissions.mode))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           **kwargs: Any) -> LoadSessionResponse:
        """Reopen a recorded session (`.agent/sessions/ID.jsonl`): its conversation is replayed as updates, then the
        model sees it again with the next prompt."""
        from tui_agent.acp.replay import replayed

        if session_id in self.sessions:
            raise RequestError.invalid_params({"message": f"session {session_id!r} is open on this connection already"})
        session = await self._open(cwd, mcp_servers or [], resume=session_id)
        assert self.client is not None
        for update in replayed(session.agent.project.root, session.agent.session.path):
            await self.client.session_update(session_id=session.session_id, update=update)
        session.announce_commands()
        return LoadSessionResponse(modes=modes(session.agent.permissions.mode))

    async def _open(self, cwd: str, mcp_servers: list[Any], *, resume: str | None) -> AcpSession:
        from tui_agent.core.agent.sessions import SessionNotFound
        from tui_agent.core.runtime import open_runtime

        self._check_cwd(cwd)
        configs = client_servers(mcp_servers)
        approvals = AcpApprovals()
        options = self.options
        try:
            runtime = await open_runtime(options.project, approve=approvals, model=options.model, resume=resume,
                                         sandbox_tier=options.sandbox_tier, permission_mode=options.permission_mode,
                                         trust_project=options.trust_project)
        except SessionNotFound as error:
            raise RequestError.invalid_params({"message": str(error)}) from None
        agent = agent_of(runtime)
        if agent is None:
            await runtime.aclose()
            raise RequestError.internal_error({"message": runtime.core.model_error or "no model is configured"})
        for problem in runtime.core.problems:
            log.warning("%s", problem)
        assert self.client is not None
        session = AcpSession(runtime, agent, self.client, approvals)
        if self.reads_buffers:
            from tui_agent.acp.buffers import EditorBuffers

            agent.executor.gate = EditorBuffers(self.client, session.session_id)
        try:
            await session.add_servers(configs)
        except BaseException:
            await session.aclose()
            raise
        self.sessions[session.session_id] = session
        return session

    def _check_cwd(self, cwd: str) -> None:
        if not Path(cwd).is_absolute():
            raise RequestError.invalid_params({"message": f"cwd must be an absolute path, not {cwd!r}"})
        if Path(cwd).resolve() != self.options.project.resolve():
            raise RequestError.invalid_params({"message": (
                f"this agent serves the project {self.options.project.resolve()}; cwd {cwd} is another folder: start "
                f"`tuiagent --project {cwd} acp` for it")})

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"message": f"no session {session_id!r} on this connection"})
        return session

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        return PromptResponse(stop_reason=await session.prompt(prompt_text(prompt)))

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is not None:
            await session.cancel()

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> SetSessionModeResponse:
        self._session(session_id).set_mode(mode_id)
        return SetSessionModeResponse()

    async def aclose(self) -> None:
        for session in list(self.sessions.values()):
            try:
                await session.aclose()
            except PROJECT_FAILURES:  # one session failing to close must not keep the others open
                log.exception("closing an ACP session failed")
        self.sessions.clear()
