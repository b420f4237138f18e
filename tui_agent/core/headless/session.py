"""One headless session: its approvals (flags, or the stream-json caller's can_use_tool), control requests, turns."""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from tui_agent.core.agent.callgate import InputReplaced
from tui_agent.core.headless.output import HeadlessPrinter, RunInfo
from tui_agent.core.agent.permissions import ApprovalRequest, flag_approver
from tui_agent.core.agent.toolbase import ToolFailure
from tui_agent.core.content import JsonObject
from tui_agent.core.events import TurnFailed
from tui_agent.core.headless.claude_names import MODES, claude_mode, claude_tool
from tui_agent.core.headless.control import ControlChannel, Handler

if TYPE_CHECKING:
    from tui_agent.commands.claude_flags import ClaudeOptions
    from tui_agent.core.agent.loop import Agent
    from tui_agent.core.headless.hooks import SdkHooks
    from tui_agent.core.mcp.hub import McpHub
    from tui_agent.core.project import Project

CLAUDE_STATUS = {"running": "connected", "starting": "pending", "untrusted": "disabled"}


class Approvals:
    """The approval callback: --yes / bypassPermissions approve; with --permission-prompt-tool stdio the caller is
    asked (a can_use_tool control request, with the tool's Claude Code name and its input); else the flag rules.
    An allow with another input (`updatedInput`) restarts the call with that input (InputReplaced), checked like the
    model's input and not asked about again."""

    def __init__(self, printer: HeadlessPrinter, channel: ControlChannel | None, *, yes: bool, allow: list[str],
                 options: ClaudeOptions, hooks: SdkHooks | None = None) -> None:
        self.printer = printer
        self.hooks = hooks
        self.channel = channel
        self.bypass = yes or options.bypass
        self.ask_caller = options.ask_caller and channel is not None
        self._flags = flag_approver(yes=self.bypass, allowed_tools=allow)
        self._asked: set[str] = set()
        self._replaced: set[str] = set()
        """Calls the caller allowed with an input of its own: their restart's approval is already given."""

    async def __call__(self, request: ApprovalRequest) -> bool:
        approved = self.hooks.approved if self.hooks is not None else set()
        if any(c["name"] == request.tool and "is_error" not in c and c["id"] in approved for c in self.printer.tool_calls):
            return True  # a PreToolUse hook allowed this call
        if self.bypass or not self.ask_caller or self.channel is None:
            return bool(await self._flags(request))
        running = [c for c in self.printer.tool_calls if c["name"] == request.tool and "is_error" not in c]
        restarted = next((c for c in running if c["id"] in self._replaced), None)
        if restarted is not None:
            self._replaced.discard(restarted["id"])
            return True
        call = next((c for c in running if c["id"] not in self._asked), None)
        if call is not None:
            self._asked.add(call["id"])
        try:
            answer = await self.channel.request({
            "subtype": "can_use_tool", "tool_name": claude_tool(request.tool),
                "input": call["input"] if call else {}, "tool_use_id": call["id"] if call else None,
                "permission_suggestions": None, "blocked_path": None, "title": request.summary,
                "description": request.detail[:4000], "decision_reason": f"tuiagent asks before a {request.kind} call"})
        except (RuntimeError, EOFError):  # the caller failed to answer, or is gone: not approved
            return False
        if answer.get("behavior") != "allow":
            return False
        updated = answer.get("updatedInput")
        if call is not None and updated is not None and updated != call["input"]:
            if not isinstance(updated, dict):
                raise ToolFailure(f"the caller allowed this call with an input that is not a JSON object ({updated!r}); "
                                  "nothing was run")
            self._replaced.add(call["id"])
            call["input"], call["input_replaced"] = updated, True
            raise InputReplaced(updated)
        return True


def server_rows(*hubs: McpHub | None) -> list[dict[str, str]]:
    """The init line's `mcp_servers`: name and Claude Code's status word, plus ours and the reason it failed."""
    rows: list[dict[str, str]] = []
    for hub in hubs:
        for row in hub.rows() if hub is not None else []:
            line = {"name": row.name, "status": CLAUDE_STATUS.get(row.status, "failed"), "tuiagent_status": row.status}
            if row.error:
                line["error"] = row.error
            rows.append(line)
    return rows


def held_server_rows(project: Project, listed: set[str]) -> list[dict[str, str]]:
    """The project's configured servers no hub started (a restricted project holds them all), as init-line rows."""
    from tui_agent.core.mcp.config import McpConfigError, load_server_configs

    try:
        configs, _problems = load_server_configs(project)
    except (McpConfigError, OSError, ValueError):
        return []
    return [{"name": config.name, "status": CLAUDE_STATUS["untrusted"], "tuiagent_status": "untrusted",
             "error": "not started: the project is not trusted (tuiagent trust)"}
            for config in configs if config.name not in listed]


@dataclasses.dataclass
class Session:
    """Runs prompts on an agent, printing each turn; `interrupt()` ends the running turn (its result says so)."""

    agent: Agent
    printer: HeadlessPrinter
    approvals: Approvals
    hubs: tuple[McpHub | None, ...]
    edited: Callable[[], Awaitable[list[str] | None]] | None = None
    hooks: SdkHooks | None = None
    _turn: asyncio.Task[None] | None = None

    def info(self, tools: list[str], version: str) -> RunInfo:
        agent = self.agent
        servers = server_rows(*self.hubs)
        servers += held_server_rows(agent.project, {row["name"] for row in servers})
        return RunInfo(agent.session_id, agent.model, str(agent.project.root), tools,
                       claude_mode(agent.permissions.mode, bypass=self.approvals.bypass), servers,
                       "ANTHROPIC_API_KEY" if os.environ.get("ANTHROPIC_API_KEY") else "none", version,
                       getattr(agent.client, "max_tokens", 0))

    def run_hooks(self, hooks: SdkHooks) -> None:
        """The SDK's hooks around every tool call, their inputs carrying this session's fields."""
        agent = self.agent

        def base() -> JsonObject:
            return {"session_id": agent.session_id, "cwd": str(agent.project.root),
                    "transcript_path": str(agent.project.sessions_dir / f"{agent.session_id}.jsonl"),
                    "permission_mode": claude_mode(agent.permissions.mode, bypass=self.approvals.bypass)}

        hooks.base = base
        agent.executor.gate = hooks
        self.hooks = hooks

    async def run(self, prompt: str, version: str) -> int:
        agent = self.agent
        before = dataclasses.replace(agent.usage)
        _system, tools = agent.build_request()
        self.printer.start(self.info([str(tool["name"]) for tool in tools], version), agent.turns)
        self._turn = asyncio.create_task(self._consume(prompt))
        try:
            await asyncio.wait({self._turn})
        except asyncio.CancelledError:  # the whole run (Ctrl-C, SIGTERM): the turn goes with it
            self._turn.cancel()
            await asyncio.gather(self._turn, return_exceptions=True)
            raise
        if self._turn.cancelled():
            self.printer.interrupted = True
        elif self._turn.exception() is not None:
            raise self._turn.exception()  # type: ignore[misc]
        edited = await self.edited() if self.edited is not None else None
        return self.printer.finish(session_id=agent.session_id, model=agent.model, run_usage=agent.usage.since(before),
                                   session_usage=agent.usage, edited_files=edited)

    async def _consume(self, prompt: str) -> None:
        """The prompt's turn (after the UserPromptSubmit hooks), and the turns a Stop hook asks for after it."""
        hooks = self.hooks
        if hooks is not None:
            prompt, blocked = await hooks.prompt_submitted(prompt)
            if blocked is not None:
                self.printer.handle(TurnFailed(f"a UserPromptSubmit hook blocked the prompt: {blocked}", kind="hook_blocked"))
                return
        for again in [False] + [True] * max(0, self.agent.settings.max_turns - 1):
            async for event in self.agent.run_turn(prompt):
                self.printer.handle(event)
            if hooks is None or not self.printer.finished or self.printer.error is not None:
                return
            reason = await hooks.go_on(again)
            if reason is None:
                return
            prompt = reason

    # control requests -----------------------------------------------------------------------------
    def handlers(self) -> dict[str, Handler]:
        return {"interrupt": self._interrupt, "set_permission_mode": self._set_mode, "set_model": self._set_model,
                "mcp_status": self._mcp_status}

    async def _interrupt(self, request: JsonObject) -> JsonObject:
        if self._turn is not None and not self._turn.done():
            self._turn.cancel()
        return {}

    async def _set_mode(self, request: JsonObject) -> JsonObject:
        mode = str(request.get("mode"))
        if mode not in MODES:
            raise ValueError(f"unknown permission mode {mode!r}")
        self.agent.permissions.set_mode(MODES[mode])
        self.approvals.bypass = mode == "bypassPermissions"
        return {}

    async def _set_model(self, request: JsonObject) -> JsonObject:
        if request.get("model"):
            self.agent.model = str(request["model"])
        return {}

    async def _mcp_status(self, request: JsonObject) -> dict[str, object]:
        servers = server_rows(*self.hubs)
        return {"mcpServers": servers + held_server_rows(self.agent.project, {row["name"] for row in servers})}


def initialize_handler(warnings: list[str], hooks: SdkHooks) -> Callable[[JsonObject], Awaitable[JsonObject | None]]:
    """Claude Code's initialize response, with what tuiagent has of it (no slash commands, agents or models list);
    the caller's PreToolUse/PostToolUse hooks are registered, its other hooks and its agents are not run (a warning
    says so)."""

    async def answer(request: JsonObject) -> JsonObject:
        warnings.extend(hooks.register(request.get("hooks")))
        if request.get("agents"):
            warnings.append("initialize: agents from the SDK are not supported by tuiagent and are ignored")
        return {"commands": [], "agents": [], "output_style": "default", "available_output_styles": ["default"],
                "models": [], "account": {}, "pid": os.getpid(), "hook_on_failure_supported": True,
                "hooks_applied": True}

    return answer
