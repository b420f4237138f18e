"""The prompt half of every request: system blocks and tools frozen when a conversation starts, changes told as notes.

`parts(conversation)` gives the system blocks and the tools array (frozen_prefix.PromptPlan freezes them for the
conversation's list of turns; a new list, after /clear or a resume, freezes them again with AGENTS.md and the
environment read anew). `announce_changes` adds a note to the conversation when the catalog or the permission mode
changed since the model was told; a prompt taken back takes that telling back too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from tui_agent.core.agent.conversation import Conversation
from tui_agent.core.agent.instructions import Environment, drop_early_glance, glance_early, project_instructions
from tui_agent.core.agent.permissions import Permissions
from tui_agent.core.agent.system_prompt import CatalogEntry, catalog_entries, rank
from tui_agent.core.agent.frozen_prefix import PromptPlan
from tui_agent.core.agent.providers import ToolProvider, with_provided_tools
from tui_agent.core.agent.request import PromptParts
from tui_agent.core.agent.toolbase import BuiltinTool
from tui_agent.core.agent.turns import Turn
from tui_agent.core.project import Project
from tui_agent.core.settings import Settings
from tui_agent.core.protocols import AgentCatalog


class Prompting:
    """The agent's plan (`plan`, replaceable: headless shaping puts its own), its session context, what it told."""

    def __init__(self, *, project: Project, permissions: Permissions, catalog: AgentCatalog | None, trusted: bool,
                 builtins: Mapping[str, BuiltinTool], providers: Sequence[ToolProvider], authored_names: Sequence[str]) -> None:
        self.project = project
        self.permissions = permissions
        self.catalog = catalog
        self.trusted = trusted
        self.builtins = builtins
        self.providers = providers
        self.authored_names = authored_names
        self.plan = PromptPlan()
        self._plan_turns: list[Turn] | None = None  # the conversation the plan was frozen for
        self._context: tuple[str, str] | None = None  # project instructions and environment, once per session
        self._told_before_prompt: tuple[dict[str, tuple[str, str]], str] | None = None

    def reset(self) -> None:
        """A new conversation: the plan is frozen again, AGENTS.md and the environment read again."""
        self.plan.reset()
        self._context = None

    def is_current(self, conversation: Conversation) -> bool:
        return self.plan.frozen and self._plan_turns is conversation.turns and bool(conversation.turns)

    def parts(self, conversation: Conversation, settings: Settings) -> tuple[PromptParts, bool]:
        """The system blocks and tools of the next request, and whether the plan was frozen just now (a new prefix:
        the previous request's cache mark no longer applies)."""
        ranked = self._ranked_entries()
        fresh = not self.is_current(conversation)
        if fresh:
            instructions, environment = self._session_context()
            self.plan.freeze(root=str(self.project.root), mode=self.permissions.mode, ranked=ranked,
                             budget=settings.catalog_token_budget, top_k=settings.catalog_top_k, builtins=self.builtins,
                             instructions=instructions, environment=environment)
            self._plan_turns = conversation.turns if conversation.turns else None
        assert self.plan.system is not None
        tools = with_provided_tools(self.plan.tools(self.builtins, ranked or [], self.authored_names), self.providers)
        return PromptParts(list(self.plan.system), tools), fresh

    def announce_changes(self, conversation: Conversation) -> None:
        """Tell the model what changed in the catalog (or the permission mode) since it was told, in the conversation."""
        if not self.is_current(conversation):
            return
        if conversation.pending_prompt is not None:  # if this prompt is taken back, so is the note: the model was not told
            self._told_before_prompt = (dict(self.plan.told), self.plan.mode)
        note = self.plan.changes(self._ranked_entries(), self.permissions.mode)
        if note and conversation.turns[-1].role == "user":
            conversation.add_note(note, with_suggestion=False)

    def prompt_answered(self) -> None:
        self._told_before_prompt = None

    def prompt_taken_back(self) -> None:
        """The model never saw the prompt, nor the note that went with it: what it was told is as before."""
        if self._told_before_prompt is not None:
            self.plan.told, self.plan.mode = self._told_before_prompt
        self._told_before_prompt = None

    def _ranked_entries(self) -> list[CatalogEntry] | None:
        return rank(catalog_entries(self.catalog), self.authored_names) if self.catalog is not None else None

    def glance_ahead(self) -> None:
        """Start the environment's repository glance in a thread when the next request reads the session's context."""
        if self._context is None:
            glance_early(self.project.root)

    def drop_glance(self) -> None:
        """A glance started by `glance_ahead` that no request took is not kept for a later one."""
        if self._context is None:
            drop_early_glance(self.project.root)

    def _session_context(self) -> tuple[str, str]:
        """AGENTS.md/CLAUDE.md and the environment, read at the session's first request and kept for the session."""
        if self._context is None:
            from tui_agent.core.agent.skill_provider import SkillProvider
            from tui_agent.core.agent.skills import skills_prompt

            offered = [skill for provider in self.providers if isinstance(provider, SkillProvider)
                       for skill in provider.skills.values()]
            instructions = "\n\n".join(part for part in (project_instructions(self.project.root, trusted=self.trusted),
                                                          skills_prompt(offered)) if part)
            self._context = (instructions, Environment.capture(self.project.root).text())
        return self._context
