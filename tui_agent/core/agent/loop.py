"""The agent loop: prompt → model → tool calls → results, repeated until the model stops, as a stream of events."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING

from tui_agent.core.agent.builtins import builtin_tools
from tui_agent.core.agent.executor import ToolExecutor
from tui_agent.core.agent.conversation import CANCELLED_RESULT as CANCELLED_RESULT, Conversation
from tui_agent.core.agent.context_limit import request_tokens
from tui_agent.core.agent.model import ModelError, ModelReply
from tui_agent.core.agent.permissions import Permissions
from tui_agent.core.agent.pricing import UsageTotals
from tui_agent.core.agent.providers import ToolProvider
from tui_agent.core.agent.request_prefix import Prompting
from tui_agent.core.agent.request_sync import RequestSync
from tui_agent.core.agent.frozen_prefix import PromptPlan
from tui_agent.core.agent.request import CacheMark, PromptParts, RequestSettings, build_request
from tui_agent.core.agent.sessions import SessionLog
from tui_agent.core.agent.stops import REFUSED_PLACEHOLDER, StopHandling, handling
from tui_agent.core.agent.thinking import THINKING_DROPPED, refuses_thinking, thinking_from
from tui_agent.core.agent.toolbase import BuiltinTool, ToolOutput
from tui_agent.core.agent.toolresults import count_failure, checkpoint_warnings
from tui_agent.core.agent.turns import AssistantTurn, Turn, turns_of
from tui_agent.core.changes import ChangeFeed
from tui_agent.core.content import ApiMessage, TextBlock, ToolDefinition, ToolResultBlock, ToolUseBlock, text_block
from tui_agent.core.errors import ErrorKind
from tui_agent.core.events import (Event, Notice, TextDelta, ToolCallFinished, ToolCallStarted, ToolOutputDelta, TurnFailed, TurnFinished,
                                   TurnStarted, Usage)
from tui_agent.core.project import Project
from tui_agent.core.settings import Settings
from tui_agent.core.web.search import search_note, search_tool, server_calls
from tui_agent.core.protocols import AgentCatalog, AgentRecipes, AgentSandbox, Model, TurnRecorder

if TYPE_CHECKING:  # the watcher (watchfiles) and the suggestion book load with the catalog that uses them
    from tui_agent.core.tending.suggestions import SuggestionBook
    from tui_agent.core.watch import ProjectWatcher


CONTEXT_LIMIT_TOKENS = 200_000
COMPACT_AT = 0.85


@dataclasses.dataclass
class Step:
    """Where a turn stands: its prompt, the text streamed by the request under way, the results of the calls that
    finished (both needed to close the conversation on a cancel), failures counted, and whether it ended."""

    prompt: str
    partial_text: list[str] = dataclasses.field(default_factory=list)
    results: list[ToolResultBlock] = dataclasses.field(default_factory=list)
    failures: dict[str, int] = dataclasses.field(default_factory=dict)
    ended: bool = False


class Agent:
    """One conversation with the model in one project; `run_turn(prompt)` yields the events of one prompt."""

    def __init__(
        self,
        *,
        project: Project,
        settings: Settings,
        client: Model,
        permissions: Permissions,
        session: SessionLog,
        sandbox: AgentSandbox | None = None,
        catalog: AgentCatalog | None = None,
        recipes: AgentRecipes | None = None,
        messages: list[ApiMessage] | None = None,
        turns: list[Turn] | None = None,
        usage: UsageTotals | None = None,
        context_limit_tokens: int = CONTEXT_LIMIT_TOKENS,
        changes: ChangeFeed | None = None,
        watcher: ProjectWatcher | None = None,
        tool_providers: list[ToolProvider] | None = None,
        trusted: bool = True,
    ) -> None:
        self.project = project
        self.trusted = trusted
        """False in a restricted (untrusted) project: its AGENTS.md/CLAUDE.md stay out of the system prompt."""
        self.settings = settings
        self.client = client
        self.permissions = permissions
        self.sandbox = sandbox
        self.catalog = catalog
        self.recipes = recipes
        suggestions = None
        if catalog is not None:
            from tui_agent.core.tending.suggestions import SuggestionBook

            suggestions = SuggestionBook(project.sessions_dir, catalog.state)
        self.conversation = Conversation(turns if turns is not None else turns_of(messages or []), session, suggestions)
        self.usage = usage or UsageTotals()
        self.context_limit_tokens = context_limit_tokens
        self.changes = changes  # the project's change feed: what the stores publish during a call joins the turn
        self.watcher = watcher  # before each request, wait until the files changed so far have been handled
        self.builtins: dict[str, BuiltinTool] = builtin_tools(has_sandbox=sandbox is not None, has_catalog=catalog is not None, has_recipes=recipes is not None)
        self.authored_names: list[str] = []  # tools authored in this session, newest last
        self.recorder: TurnRecorder | None = None
        """Records a checkpoint of the work tree before and after each turn (the undo service), when git is there."""
        self._previous_end: CacheMark | None = None  # where the last request's messages ended (a breakpoint)
        self.tool_providers: list[ToolProvider] = list(tool_providers or [])  # e.g. MCP servers' tools
        self.prompting = Prompting(project=project, permissions=permissions, catalog=catalog, trusted=trusted,
                                   builtins=self.builtins, providers=self.tool_providers, authored_names=self.authored_names)
        self.executor = ToolExecutor(project=project, permissions=permissions, builtins=self.builtins, providers=self.tool_providers,
                                     authored_names=self.authored_names, sandbox=sandbox, catalog=catalog, recipes=recipes,
                                     changes=changes)
        self.request_sync = RequestSync(lambda: self.watcher, self.executor.forwarding_store_changes, self.prompting)
        self.thinking, self._setup_notes = thinking_from(settings)
        if self.thinking.note_for(client.model):
            self._setup_notes.append(self.thinking.note_for(client.model))
        self._setup_notes += self._offer_skills()
        if search_note(client.model, settings):
            self._setup_notes.append(search_note(client.model, settings))

    def _offer_skills(self) -> list[str]:
        """Agent Skills of the project (trusted) and the home: listed in the system prompt, loaded by use_skill;
        a SKILL.md that is not valid is named in a warning at the first turn."""
        from pathlib import Path

        from tui_agent.core.agent.skill_provider import SkillProvider
        from tui_agent.core.agent.skills import discover

        skills, problems = discover(self.project.root, Path.home(), trusted=self.trusted)
        if skills:
            self.tool_providers.append(SkillProvider(skills))
        return problems

    @property
    def model(self) -> str:
        return self.client.model

    @model.setter
    def model(self, name: str) -> None:
        self.client.model = name

    @property
    def session_id(self) -> str:
        return self.session.id

    @property
    def messages(self) -> list[ApiMessage]:
        """The conversation as API messages (a copy derived from its turns)."""
        return self.conversation.messages

    @messages.setter
    def messages(self, messages: list[ApiMessage]) -> None:
        self.conversation.replace(turns_of(messages))

    @property
    def turns(self) -> list[Turn]:
        return self.conversation.turns

    @property
    def session(self) -> SessionLog:
        return self.conversation.session

    @session.setter
    def session(self, session: SessionLog) -> None:
        self.conversation.session = session

    @property
    def suggestions(self) -> SuggestionBook | None:
        return self.conversation.suggestions

    def clear(self) -> None:
        """Forget the conversation (the session file keeps what was said)."""
        self.conversation.replace([])
        self.prompting.reset()
        self.session.append({"type": "clear", "time": time.time()})

    def add_note(self, text: str) -> None:
        """Tell the model something with the next request (e.g. that the person undid its last turn)."""
        self.conversation.add_note(text)

    def instructions_changed(self, note: str) -> None:
        """The instructions file changed: a running conversation is told with `note` (its cached system prompt stays);
        one not started yet reads the file anew at its first request."""
        if self.conversation.turns:
            self.conversation.add_note(note, with_suggestion=False)
        else:
            self.prompting.reset()

    # ------------------------------------------------------------------ requests

    @property
    def plan(self) -> PromptPlan:
        """The cache-stable system prompt and tools of this conversation (headless shaping replaces it)."""
        return self.prompting.plan

    @plan.setter
    def plan(self, plan: PromptPlan) -> None:
        self.prompting.plan = plan

    def build_request(self) -> tuple[list[TextBlock], list[ToolDefinition]]:
        """The system blocks and the `tools` array of the next request (see `prompt_parts`)."""
        parts = self.prompt_parts()
        return parts.system, parts.tools

    def prompt_parts(self) -> PromptParts:
        """The system blocks and the `tools` array of the next request: fixed when the conversation starts (see
        frozen_prefix); the API's web search, when enabled for a model that has it, leads the tools (it stays put)."""
        parts, fresh = self.prompting.parts(self.conversation, self.settings)
        if fresh:
            self._previous_end = None
        search = search_tool(self.client.model, self.settings)
        return PromptParts(parts.system, [search, *parts.tools]) if search is not None else parts

    def _fail_turn(self, failed: TurnFailed, prompt: str) -> TurnFailed:
        """Leave a valid history after a failed request: take an unanswered prompt back, or close the answered turn."""
        if self.conversation.take_back_prompt():  # the model never answered: the prompt leaves the conversation
            self.prompting.prompt_taken_back()
            return dataclasses.replace(failed, prompt=prompt, message=f"{failed.message} (the prompt was not kept)")
        self.conversation.close_failed_turn(failed.message)
        return failed

    def _log_prompt(self) -> None:
        self.prompting.prompt_answered()
        self.conversation.log_prompt()

    def _max_tokens(self) -> int:
        """The max_tokens the requests carry (thinking raises the client's own)."""
        return self.thinking.request_params(self.client.model, self.client.max_tokens)[1]

    # ------------------------------------------------------------------ the turn

    async def run_turn(self, prompt: str) -> AsyncGenerator[Event, None]:
        """Run one user prompt to the end, yielding every event (and appending each to the session file)."""
        recorder = self.recorder
        inner = self._turn(prompt)
        try:
            if recorder is not None:
                self.request_sync.ahead(prompt)  # the first request's settle and git glance, while undo checkpoints
                await recorder.begin(self.session, prompt)
            async for event in inner:
                if isinstance(event, ToolOutputDelta):  # a live view only: not recorded, not a step of the turn
                    yield event
                    continue
                self.session.append_event(event)
                if not isinstance(event, TextDelta):  # told between texts, so a streaming reply is not split
                    for message, level in [*self.session.take_problems(), *checkpoint_warnings(recorder)]:
                        yield Notice(message, level)
                if recorder is not None:
                    recorder.observe(event)
                    if isinstance(event, (ToolCallStarted, ToolCallFinished)):
                        await recorder.around_call(event)  # undo attributes changes per call (core/undo)
                    if isinstance(event, TurnFinished):  # the last checkpoint before anyone hears the turn is over:
                        await recorder.end(self.session)  # an edit the person makes then is theirs, not the turn's
                yield event
        finally:
            await inner.aclose()
            await self.request_sync.turn_ended()
            if recorder is not None:
                await recorder.end(self.session)

    async def _turn(self, prompt: str) -> AsyncGenerator[Event, None]:
        """The loop: ask the model, record its reply, run its tool calls, until it stops calling tools."""
        yield TurnStarted(prompt=prompt, session_id=self.session_id)
        for note in self._take_setup_notes():
            yield Notice(note, "warning")
        if not prompt.strip():
            yield TurnFailed("the prompt is empty: type something to send", kind="empty_prompt", prompt=prompt)
            return
        step = Step(prompt)
        self.conversation.begin_prompt(prompt)
        try:
            for _ in range(max(1, self.settings.max_turns)):
                async for event in self._step(step):
                    yield event
                if step.ended:
                    return
            yield TurnFailed(f"stopped after {self.settings.max_turns} model requests for one prompt (the limit is max_turns in "
                             "[agent] of .agent/config.toml); say 'continue' to go on", kind="max_turns")
        except (asyncio.CancelledError, GeneratorExit):
            self.prompting.prompt_answered()
            self.conversation.cancel("".join(step.partial_text), step.results)
            if self.sandbox is not None:
                await self.sandbox.cancel_running()
            raise

    async def _step(self, step: Step) -> AsyncIterator[Event]:
        """One request and what its reply asks for; `step.ended` once the turn is over."""
        step.partial_text.clear()
        outcome: ModelReply | TurnFailed | None = None
        async for item in self._request():
            if isinstance(item, (ModelReply, TurnFailed)):
                outcome = item
                continue
            if isinstance(item, TextDelta):
                step.partial_text.append(item.text)
            yield item
        step.partial_text.clear()
        assert outcome is not None
        if isinstance(outcome, TurnFailed):
            step.ended = True
            yield self._fail_turn(outcome, step.prompt)
            return
        stop = self._record_reply(outcome)
        for call in server_calls(outcome.content):  # searches the API ran: shown as tool calls, nothing to answer
            yield ToolCallStarted(call.call_id, call.name, call.arguments)
            yield ToolCallFinished(call.call_id, call.name, call.result, call.is_error, 0.0)
        if stop.drop_reply:  # a refusal ends the turn as a failure (headless exits 1), its reply not kept
            step.ended = True
            yield TurnFailed(stop.message, kind=outcome.stop_reason)
            return
        if stop.message:
            yield Notice(stop.message, stop.level)
        if stop.shorten:
            self.conversation.shorten(0)
        if not outcome.tool_uses:
            step.ended = not stop.continue_turn
            if step.ended:
                yield TurnFinished(text=outcome.text, stop_reason=outcome.stop_reason)
            return
        async for event in self._answer(outcome, step):
            yield event

    async def _answer(self, reply: ModelReply, step: Step) -> AsyncIterator[Event]:
        """Run the reply's tool calls and add their results; stop the turn when the same call keeps failing."""
        outputs: list[tuple[ToolUseBlock, ToolOutput]] = []
        step.results = []
        async for event in self.executor.answer_calls(reply, step.results, outputs):
            yield event
        stops = [count_failure(step.failures, call, output) for call, output in outputs]  # counted in order
        self.conversation.add_results(step.results)
        step.results = []
        stop_message = next((message for message in reversed(stops) if message), "")
        if stop_message:
            step.ended = True
            yield TurnFailed(stop_message, kind="repeated_failure")

    def _take_setup_notes(self) -> list[str]:
        notes, self._setup_notes = self._setup_notes, []
        return notes

    def _record_reply(self, reply: ModelReply) -> StopHandling:
        """Log the prompt, then the reply (a placeholder for a refused one); what its stop reason asks of the turn."""
        self._log_prompt()
        stop = handling(reply.stop_reason, max_tokens=self._max_tokens(), stop_sequence=reply.stop_sequence)
        content = [text_block(REFUSED_PLACEHOLDER)] if stop.drop_reply else reply.content
        self.conversation.append(AssistantTurn(tuple(content or [text_block("(no content)")])))
        return stop

    async def _request(self) -> AsyncIterator[Event | ModelReply]:
        """One model request (with context shortening, and earlier thinking left out once when the API refuses it);
        yields TurnFailed instead of raising."""
        async for event in self._sync_catalog():
            yield event
        self.prompting.announce_changes(self.conversation)
        for provider in self.tool_providers:
            for event in await provider.prepare():
                yield event
        compactions, thinking_dropped = 0, False
        while True:
            prompt = self.prompt_parts()
            if compactions == 0 and request_tokens(prompt.system, prompt.tools, self.messages) > self.context_limit_tokens * COMPACT_AT:
                count, compactions = self.conversation.shorten(compactions)
                if count:
                    yield Notice(f"the conversation is near the context limit: shortened {count} old tool results", "warning")
            request = build_request(self.conversation.turns, prompt, RequestSettings(self.client.model, self.thinking, self._previous_end))
            try:
                async for item in self.client.stream_reply(**request.kwargs):
                    if isinstance(item, ModelReply):
                        self._previous_end = request.end
                        self.usage.add(item.usage)
                        yield self._usage_event(item)
                    yield item
                return
            except ModelError as error:
                if error.kind is ErrorKind.CONTEXT_TOO_LONG:
                    count, compactions = self.conversation.shorten(compactions)
                    if count:
                        yield Notice(f"{error.message}: shortened {count} old tool results and retrying", "warning")
                        continue
                    yield TurnFailed(f"{error.message}; nothing older to shorten: shorten the prompt, or start a new conversation (/clear)", kind=error.kind.value)
                    return
                if not thinking_dropped and refuses_thinking(error) and self.conversation.drop_earlier_thinking():
                    thinking_dropped = True
                    yield Notice(THINKING_DROPPED, "warning")
                    continue
                yield TurnFailed(error.message, kind=error.kind.value, details={"status": error.status, "base_url": self.client.base_url})
                return

    def _usage_event(self, reply: ModelReply) -> Usage:
        used, total = reply.usage, self.usage
        return Usage(used.input_tokens, used.output_tokens, used.cache_read_tokens, used.cache_write_tokens, used.cost_usd,
                     total.cost_usd, total.input_tokens, total.output_tokens, total.cache_read_tokens, total.cache_write_tokens)

    async def _sync_catalog(self) -> AsyncIterator[Event]:
        """Let the project watcher handle the files changed so far (tool files someone else edited, the agent's own
        writes), so that this request lists the tools as they are now."""
        for event in await self.request_sync.settled():
            yield event
