"""Approvals asked through ACP's `session/request_permission`: allow once, allow always (a session rule), reject."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING, Any

from acp import text_block, tool_content
from acp.schema import AllowedOutcome, PermissionOption, ToolCallProgress, ToolCallUpdate

from tui_agent.acp.toolcalls import KINDS
from tui_agent.core.agent.permission_rules import suggested_rule
from tui_agent.core.agent.permissions import ApprovalAnswer, ApprovalRequest

if TYPE_CHECKING:
    from acp.interfaces import Client

    from tui_agent.acp.updates import EventMapper

ALLOW_ONCE, ALLOW_ALWAYS, REJECT = "allow_once", "allow_always", "reject_once"


def options_for(request: ApprovalRequest) -> list[PermissionOption]:
    """Allow always is offered where the TUI offers a rule: not for a protected path, nor a network call."""
    if request.kind == "plan":
        return [PermissionOption(option_id=ALLOW_ONCE, name="Approve the plan", kind="allow_once"),
                PermissionOption(option_id=REJECT, name="Keep planning", kind="reject_once")]
    options = [PermissionOption(option_id=ALLOW_ONCE, name="Allow once", kind="allow_once")]
    if not request.protected and request.kind not in ("network", "plan"):
        rule = suggested_rule(request.tool, request.subject)
        options.append(PermissionOption(option_id=ALLOW_ALWAYS, name=f"Always allow {rule} (this session)",
                                        kind="allow_always"))
    options.append(PermissionOption(option_id=REJECT, name="Reject", kind="reject_once"))
    return options


class AcpApprovals:
    """The runtime's approval callback: the running call (as the client knows it from its tool_call) is sent with
    the request's summary, its diff or command and its notes; the client's choice is the answer. No answer (the
    client cancelled the request, or the turn) is a refusal."""

    def __init__(self) -> None:
        self.client: Client | None = None
        self.session_id = ""
        self.mapper: EventMapper | None = None
        self._ids = itertools.count(1)

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        if self.client is None:
            return ApprovalAnswer(False)
        call = self._call(request)
        response = await self.client.request_permission(session_id=self.session_id, tool_call=call,
                                                        options=options_for(request))
        outcome = response.outcome
        if not isinstance(outcome, AllowedOutcome) or outcome.option_id not in (ALLOW_ONCE, ALLOW_ALWAYS):
            return ApprovalAnswer(False)
        await self.client.session_update(session_id=self.session_id, update=ToolCallProgress(
            session_update="tool_call_update", tool_call_id=call.tool_call_id, status="in_progress"))
        if outcome.option_id == ALLOW_ALWAYS and not request.protected and request.kind not in ("network", "plan"):
            return ApprovalAnswer(True, suggested_rule(request.tool, request.subject), "session")
        return ApprovalAnswer(True)

    def _call(self, request: ApprovalRequest) -> ToolCallUpdate:
        running = self.mapper.running if self.mapper is not None else None
        detail = "\n".join([request.detail, *request.notes]).strip()
        content: list[Any] = []
        if running is not None:
            content = list(self.mapper.proposal(running) or []) if self.mapper is not None else []
        if detail and not any(getattr(item, "type", "") == "diff" for item in content):
            content = [tool_content(text_block(detail))]
        call_id = running.call_id if running is not None else f"approval-{next(self._ids)}"
        return ToolCallUpdate(tool_call_id=call_id, title=request.summary, kind=KINDS.get(request.tool, "other"),
                              status="pending", content=content or None,
                              raw_input=running.arguments if running is not None else None)
