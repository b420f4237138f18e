"""MCP sampling: a server's `sampling/createMessage` answered by the session's model, once approved.

Every server is offered sampling; each request is an `mcp` approval of the tool `mcp_sampling` (subject: the server's
name), so the TUI asks the person, and a headless run declines unless `--yes`, `--allow mcp_sampling` (or
`mcp_sampling(SERVER)`) or the SDK's `can_use_tool` allows it. The request goes to the configured model with the
server's messages (text and images), its system prompt and at most its `maxTokens`; the model preferences, context
inclusion, temperature and stop sequences are not applied, and tools in a sampling request are refused. Its tokens
and cost count in the session's usage (a model request of its own).
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, cast

import mcp_types as types

from tui_agent.core.agent.permissions import ApprovalRequest
from tui_agent.core.content import ApiMessage, ContentBlock, MediaType, text_block

if TYPE_CHECKING:
    from tui_agent.core.agent.loop import Agent
    from tui_agent.core.agent.model import ModelClient
    from tui_agent.core.agent.permissions import Permissions
    from tui_agent.core.agent.pricing import RequestUsage
    from tui_agent.core.mcp.hub import McpHub

Sampler = Callable[[str, types.CreateMessageRequestParams], Awaitable["types.CreateMessageResult | types.ErrorData"]]
"""(server name, the request's params) → the model's message, or the error the server gets."""
STOP_REASONS = {"end_turn": "endTurn", "max_tokens": "maxTokens", "stop_sequence": "stopSequence"}
DECLINED = -1  # the code the MCP specification's examples give a sampling request the user rejected


def _block(content: Any) -> ContentBlock:
    """One MCP content item as a Messages API block; raise ValueError for what a sampling request cannot carry."""
    if isinstance(content, types.TextContent):
        return text_block(content.text)
    if isinstance(content, types.ImageContent):  # another media type: the API says no
        media_type = cast(MediaType, content.mime_type)
        return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": content.data}}
    raise ValueError(f"tuiagent cannot sample with {getattr(content, 'type', type(content).__name__)} content")


def api_messages(params: types.CreateMessageRequestParams) -> list[ApiMessage]:
    """The request's messages for the Messages API (consecutive messages of one role merged, as the API requires)."""
    messages: list[ApiMessage] = []
    for message in params.messages:
        items = message.content if isinstance(message.content, list) else [message.content]
        blocks = [_block(item) for item in items]
        if messages and messages[-1]["role"] == message.role:
            messages[-1]["content"].extend(blocks)
        else:
            messages.append({"role": message.role, "content": blocks})
    if not messages or messages[0]["role"] != "user":
        raise ValueError("a sampling request must start with a user message")
    return messages


def _shown(messages: list[ApiMessage], system: str | None) -> str:
    lines = [f"[system] {system}"] if system else []
    for message in messages:
        for block in message["content"]:
            lines.append(f"[{message['role']}] " + (block["text"] if block["type"] == "text" else f"[{block['type']}]"))
    return "\n".join(lines)


def model_sampler(client: ModelClient, permissions: Permissions,
                  on_usage: Callable[[RequestUsage], None] | None = None) -> Sampler:
    """Answers sampling requests with `client`'s model, each approved first (module docstring); `on_usage` gets
    each answered request's usage (the session counts it)."""

    async def sample(server: str, params: types.CreateMessageRequestParams) -> types.CreateMessageResult | types.ErrorData:
        if params.tools:
            return types.ErrorData(code=types.INVALID_PARAMS, message="tuiagent does not sample with tools")
        try:
            messages = api_messages(params)
        except ValueError as error:
            return types.ErrorData(code=types.INVALID_PARAMS, message=str(error))
        decision = await permissions.check(ApprovalRequest(
            "mcp", "mcp_sampling", f"the MCP server {server} asks the model {client.model} for up to "
                                   f"{params.max_tokens} tokens", _shown(messages, params.system_prompt), subject=server))
        if not decision.allowed:
            return types.ErrorData(code=DECLINED, message=f"the sampling request was declined: {decision.reason}")
        asking = copy.copy(client)  # the same HTTP client, this request's token limit, no headless listener
        asking.max_tokens, asking.stream_listener = max(1, min(params.max_tokens, client.max_tokens)), None
        system = [text_block(params.system_prompt)] if params.system_prompt else []
        from tui_agent.core.agent.model import ModelError, ModelReply

        reply: ModelReply | None = None
        try:
            async for item in asking.stream_reply(system=system, tools=[], messages=messages):
                reply = item if isinstance(item, ModelReply) else reply
        except ModelError as error:
            return types.ErrorData(code=types.INTERNAL_ERROR, message=f"the model request failed: {error.message}")
        if reply is None:
            return types.ErrorData(code=types.INTERNAL_ERROR, message="the model gave no reply")
        if on_usage is not None:
            on_usage(reply.usage)
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text=reply.text),
                                         model=client.model, stop_reason=STOP_REASONS.get(reply.stop_reason, reply.stop_reason))

    return sample



def offer_sampling(agent: Agent, *hubs: McpHub | None) -> None:
    """Let the hubs' servers sample with the agent's model (a model of the API's; a scripted one cannot)."""
    from tui_agent.core.agent.model import ModelClient

    if isinstance(agent.client, ModelClient):
        sampler = model_sampler(agent.client, agent.permissions, lambda usage: agent.usage.add(usage))
        for hub in hubs:
            if hub is not None:
                hub.set_sampling(sampler)
