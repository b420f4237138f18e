"""The Claude Agent SDK's hooks: registered in its `initialize` request, run as `hook_callback` control requests.

PreToolUse (before every call: `permissionDecision` deny refuses the call, allow approves it without asking, ask
leaves it to the permission rules; `updatedInput` replaces the input, checked like the model's) and PostToolUse
(after a call that returned: `additionalContext`, a `decision: "block"` reason, or `updatedToolOutput` reach the
model with the result), UserPromptSubmit (`decision: "block"` keeps the prompt from running; `additionalContext`
is added after it) and Stop (`decision: "block"` with a reason: the turn goes on with the reason as the next
prompt, at most max_turns times). A hook that fails or times out is passed over, unless its matcher says
`onFailure: "block"` (then the call or prompt is refused). `continue: false` and `systemMessage` are not acted on;
other hook events are named in a warning and not run.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from tui_agent.core.agent.toolbase import ToolContext, ToolFailure, ToolOutput
from tui_agent.core.events import ApprovalDenied
from tui_agent.core.headless.claude_names import claude_tool
from tui_agent.core.content import JsonObject

SUPPORTED = ("PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop")
DEFAULT_TIMEOUT_S = 60.0
Requester = Callable[[JsonObject], Awaitable[JsonObject]]


@dataclass(frozen=True)
class HookMatcher:
    """One matcher of an event: which tools (None: all), the SDK's callback ids, its timeout and failure rule."""

    matcher: str | None
    callback_ids: tuple[str, ...]
    timeout_s: float = DEFAULT_TIMEOUT_S
    blocks_on_failure: bool = False

    def matches(self, tool: str) -> bool:
        """Claude Code's matcher: empty or `*` matches all; else a regular expression over the whole name (Claude
        Code's name or tuiagent's), or the literal name when it is no valid expression."""
        if not self.matcher or self.matcher == "*":
            return True
        names = {tool, claude_tool(tool)}
        try:
            pattern = re.compile(self.matcher)
        except re.error:
            return self.matcher in names
        return any(pattern.fullmatch(name) for name in names)


def _matchers(entries: Any) -> list[HookMatcher]:
    found: list[HookMatcher] = []
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        ids = tuple(str(i) for i in entry.get("hookCallbackIds") or [])
        timeout = entry.get("timeout")
        found.append(HookMatcher(str(entry["matcher"]) if entry.get("matcher") else None, ids,
                                 float(timeout) if isinstance(timeout, (int, float)) and timeout > 0 else DEFAULT_TIMEOUT_S,
                                 entry.get("onFailure") not in (None, "continue")))
    return found


def _specific(answer: JsonObject) -> JsonObject:
    value = answer.get("hookSpecificOutput")
    return value if isinstance(value, dict) else {}


@dataclass
class SdkHooks:
    """The registered hooks, run through `request` (the control channel's); a CallGate for the tool executor.
    `base` gives the fields every hook input has (session_id, transcript_path, cwd, permission_mode)."""

    request: Requester
    base: Callable[[], JsonObject] = dict
    events: dict[str, list[HookMatcher]] = field(default_factory=dict)
    approved: set[str] = field(default_factory=set)
    """Calls a PreToolUse hook allowed: their approval is given without asking."""

    def register(self, config: Any) -> list[str]:
        """Take the `hooks` of an initialize request; the warnings for events tuiagent does not run."""
        warnings: list[str] = []
        for event, entries in (config.items() if isinstance(config, dict) else []):
            if event in SUPPORTED:
                self.events[event] = _matchers(entries)
            else:
                warnings.append(f"initialize: the SDK's {event} hooks are not run by tuiagent (it runs "
                                f"{', '.join(SUPPORTED)} hooks)")
        return warnings

    async def _run(self, event: str, payload: JsonObject, tool: str | None = None,
                   call_id: str | None = None) -> list[JsonObject]:
        """Every matching callback's answer, in order (a tool event's matchers name tools; the others match always);
        a failed one is left out or, with onFailure block, a deny / block."""
        answers: list[JsonObject] = []
        named = {"tool_name": claude_tool(tool), "tool_use_id": call_id} if tool is not None else {}
        for matcher in self.events.get(event, []):
            if tool is not None and not matcher.matches(tool):
                continue
            for callback_id in matcher.callback_ids:
                hook_input = {**self.base(), "hook_event_name": event, **payload, **named}
                try:
                    answer = await asyncio.wait_for(self.request({
                        "subtype": "hook_callback", "callback_id": callback_id, "input": hook_input,
                        "tool_use_id": call_id}), matcher.timeout_s)
                except (RuntimeError, EOFError, TimeoutError) as error:
                    if not matcher.blocks_on_failure:
                        continue
                    reason = f"the {event} hook failed ({error or 'timed out'})"
                    answer = {"decision": "block", "reason": reason,
                              "hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": reason}}
                answers.append(answer if isinstance(answer, dict) else {})
        return answers

    async def prompt_submitted(self, prompt: str) -> tuple[str, str | None]:
        """UserPromptSubmit: the prompt (with each hook's `additionalContext` after it), and the reason when a hook
        blocked it (`decision: "block"`: the prompt is not run)."""
        for answer in await self._run("UserPromptSubmit", {"prompt": prompt}):
            if answer.get("decision") == "block":
                return prompt, str(answer.get("reason") or "a UserPromptSubmit hook blocked the prompt")
            context = _specific(answer).get("additionalContext")
            if context:
                prompt = f"{prompt}\n\n{context}"
        return prompt, None

    async def go_on(self, again: bool) -> str | None:
        """Stop, when a turn ends: the reason to go on when a hook blocks the stop (`decision: "block"`), else None.
        `again`: this turn was itself a Stop hook's continuation (`stop_hook_active`)."""
        for answer in await self._run("Stop", {"stop_hook_active": again}):
            if answer.get("decision") == "block" and answer.get("reason"):
                return str(answer["reason"])
        return None

    async def before_call(self, context: ToolContext, arguments: JsonObject) -> JsonObject:
        answers = await self._run("PreToolUse", {"tool_input": arguments}, context.tool_name, context.call_id)
        for answer in answers:
            specific = _specific(answer)
            decision = specific.get("permissionDecision") or {"block": "deny", "approve": "allow"}.get(str(answer.get("decision")))
            if decision == "deny":
                reason = specific.get("permissionDecisionReason") or answer.get("reason") or ""
                message = f"denied by a PreToolUse hook{': ' + str(reason) if reason else ''}"
                context.events.append(ApprovalDenied(context.call_id, context.tool_name, message))
                raise ToolFailure(message)
            updated = specific.get("updatedInput")
            if updated is not None:
                if not isinstance(updated, dict):
                    raise ToolFailure(f"a PreToolUse hook replaced the input with something that is not a JSON object "
                                      f"({updated!r}); nothing was run")
                arguments = updated
            if decision == "allow":
                self.approved.add(context.call_id)
        return arguments

    async def after_call(self, context: ToolContext, arguments: JsonObject, output: ToolOutput) -> ToolOutput:
        self.approved.discard(context.call_id)
        answers = await self._run("PostToolUse", {"tool_input": arguments, "tool_response": output.text},
                                  context.tool_name, context.call_id)
        text, notes = output.text, []
        for answer in answers:
            specific = _specific(answer)
            replaced = specific.get("updatedToolOutput", specific.get("updatedMCPToolOutput"))
            if replaced is not None:
                text = replaced if isinstance(replaced, str) else json.dumps(replaced, ensure_ascii=False)
            if answer.get("decision") == "block" and answer.get("reason"):
                notes.append(f"[PostToolUse hook] {answer['reason']}")
            if specific.get("additionalContext"):
                notes.append(f"[PostToolUse hook] {specific['additionalContext']}")
        if text == output.text and not notes:
            return output
        return ToolOutput("\n".join([text, *notes]), is_error=output.is_error, truncated=output.truncated,
                          blocks=output.blocks)
