"""Slash commands typed in the prompt, built-in and from recipes (palette.py offers the same in the command palette)."""

from __future__ import annotations

import asyncio
from datetime import datetime
from pathlib import Path
from functools import partial
from typing import TYPE_CHECKING

from tui_agent.ui.context_usage import UsageFigures, resumed_figures
from tui_agent.ui.command_registry import Command, CommandRegistry, SlashHandler, always
from tui_agent.ui.errors import error_message
from tui_agent.ui.markdown_commands import MarkdownCommandSource
from tui_agent.ui.memory_prompt import remember_line
from tui_agent.ui.palette import show_pruned
from tui_agent.ui.model_choice import DEFAULT_SERVER, known_models, model_listing, server_models, unknown_model_warning
from tui_agent.ui.screens.pickers import Choice, ChoiceScreen
from tui_agent.ui.slash import SlashCommand, parse_slash, unescape_prompt
from tui_agent.ui.shell_prompt import bang_command, run_bang
from tui_agent.ui.slash_commit import slash_commit
from tui_agent.core.agent.memory_line import memory_line
from tui_agent.core.runtime_state import agent_of, catalog_of, recipes_of
from tui_agent.core.errors import PROJECT_FAILURES, TuiAgentError

if TYPE_CHECKING:
    from tui_agent.core.recipes.engine import RecipeEngine
    from tui_agent.ui.catalog_actions import CatalogActions
    from tui_agent.ui.host import UIHost
    from tui_agent.ui.turn import TurnRunner

KEYS_HELP = """\
Keys: enter send · ctrl+j new line · ctrl+g the prompt in $EDITOR · alt+←/alt+→ side panes wider/narrower · ↑/↓ prompt history · ctrl+r search it · ctrl+o expand a long paste (shown folded to one token) · # line adds to AGENTS.md · tab complete or next pane · shift+tab permission mode (ask → auto → read-only → plan) · pgup/pgdn scroll the conversation (shift: top/end) · esc stop the turn, a !command or a catalog run · ctrl+c copy / stop / clear / twice quits · F2/F3/F4 conversation/catalog/diff · F5 zoom the pane · ctrl+t next pane · ctrl+p command palette · ctrl+q quit
Catalog: v view · r run · d prune · u revert · U revert to a picked version · h history · f drift · A accept drift (asks) · s sort · p pruned tools (enter restores) · / filter (esc clears)
Diff: m unified / side-by-side"""


def format_size(size: int) -> str:
    """1234 -> '1.2 KB', 3_400_000 -> '3.2 MB'."""
    if size < 1024:
        return f"{size} B"
    if size < 1024 * 1024:
        return f"{size / 1024:.1f} KB"
    return f"{size / 1024 / 1024:.1f} MB"


def session_label(path: Path, modified: float, model: str, first_prompt: str) -> str:
    """A /resume picker row: when it was last written, how big it is, its model and its first prompt."""
    try:
        size = format_size(path.stat().st_size)
    except OSError:
        size = "?"
    when = datetime.fromtimestamp(modified).strftime("%Y-%m-%d %H:%M")
    prompt = " ".join(first_prompt.split())[:60] or "(no prompt)"
    return f"{when}  {size:>8}  {model or '-':<18.18} {prompt}"


class SlashCommands:
    """`/help /tools /model /clear /resume /recipes /care /cost`, `/restore NAME` and recipe `/name args` commands
    (`/undo /rewind /diff /permissions` are slash_undo.UndoCommands', `/copy /theme` everyday_actions', `/trust`
    trust_switch's); each registers its own in the app's CommandRegistry."""

    def __init__(self, host: UIHost, registry: CommandRegistry, turns: TurnRunner, catalog_actions: CatalogActions) -> None:
        self.host = host
        self.registry = registry
        self.turns = turns
        self.catalog_actions = catalog_actions
        needs_model = {"model", "cost", "compact"}  # (/init is a prompt: queued while the project opens, like any other)
        for name, handler in self.handlers().items():
            registry.add(name, handler, self.model_missing if name in needs_model else always)
        registry.add_source(self.recipe_command_list)
        registry.add_source(MarkdownCommandSource(host, registry, turns))

    def model_missing(self) -> str | None:
        """Why a command that talks to the model cannot run now (None: it can)."""
        if agent_of(self.host.state) is not None:
            return None
        return "The project is still opening: try again in a moment." if self.host.opening else self.host.no_model_message()

    async def handle_input(self, text: str) -> None:
        """A submitted prompt: a slash command, or a turn for the agent."""
        shell = bang_command(text)
        if shell is not None:
            await run_bang(self.host, self.turns, shell)
            return
        line = memory_line(text)
        if line is not None:
            await remember_line(self.host, self.turns, line)
            return
        command = parse_slash(text)
        if command is None:
            self.turns.start(unescape_prompt(text))
            return
        await self.run_slash(command)

    def handlers(self) -> dict[str, SlashHandler]:
        """This controller's commands → the coroutine that runs one with its arguments."""
        return {
            "help": self.slash_help, "tools": self.slash_tools, "model": self.slash_model, "cost": self.slash_cost,
            "clear": self.slash_clear, "resume": self.slash_resume, "recipes": self.slash_recipes, "care": self.slash_care,
            "restore": self.slash_restore, "commit": partial(slash_commit, self.host), "init": self.slash_init,
            "compact": self.slash_compact,
        }

    def recipe_command_list(self) -> list[Command]:
        """The recipes' slash commands, for the registry (read each time: recipes come and go)."""
        recipes = recipes_of(self.host.state)
        if recipes is None:
            return []
        return [Command(name, description, partial(self.run_recipe_command, recipes, name), source="recipe")
                for name, description in recipes.slash_commands()]

    async def slash_init(self, args: str) -> None:
        from tui_agent.core.agent.instructions import init_prompt

        self.turns.start(init_prompt(args))

    def recipe_commands(self) -> dict[str, str]:
        """Slash commands contributed by recipes with a `command` trigger: name -> description."""
        return {command.name: command.description for command in self.recipe_command_list()}

    async def run_slash(self, command: SlashCommand) -> None:
        found = self.registry.find(command.name)
        if found is None:
            await self.host.add_notice(f"Unknown command /{command.name}. /help lists the commands.", "warning")
            return
        refusal = found.available()
        if refusal is not None:
            await self.host.add_notice(refusal, "warning")
            return
        await found.handler(command.args)

    async def run_recipe_command(self, recipes: RecipeEngine, name: str, args: str) -> None:
        try:
            runs = await recipes.run_command(name, args)
        except TuiAgentError as exc:  # PipelineError: no such command recipe, or it is broken or disabled
            await self.host.add_notice(f"/{name}: {error_message(exc)}", "error")
            return
        for run in runs:
            await self.host.add_notice(f"/{name}: {run.summary}", "info" if run.ok else "error")
        self.host.schedule_catalog_refresh()

    async def slash_help(self, args: str) -> None:
        lines = ["Commands:", *self.registry.help_lines()]
        lines.append("  //text    send text starting with a slash")
        lines.append("  !command  run a shell command yourself, in the sandbox like the agent's run_shell (same approvals); the model sees its output")
        lines.append(KEYS_HELP)
        if self.host.runtime is not None and agent_of(self.host.runtime) is None:
            lines.append(self.host.no_model_message())
        await self.host.add_notice("\n".join(lines))

    async def slash_tools(self, args: str) -> None:
        pane = self.catalog_actions.pane()
        pane.set_filter(args)
        rows = pane.rows
        by_status: dict[str, int] = {}
        for row in rows:
            if row.kind == "tool":
                by_status[row.status] = by_status.get(row.status, 0) + 1
        summary = ", ".join(f"{count} {status}" for status, count in sorted(by_status.items())) or "none yet"
        await self.host.add_notice(f"{sum(by_status.values())} tools ({summary}). The catalog pane is focused: v r d u h f act on the selected tool.")
        self.host.action_show_pane("catalog")

    async def slash_recipes(self, args: str) -> None:
        recipes = [row for row in self.catalog_actions.pane().rows if row.kind == "recipe"]
        if not recipes:
            await self.host.add_notice("No recipes yet. A recipe is a rule file in .agent/recipes/NAME.toml (a trigger and an action).")
        else:
            lines = [f"{len(recipes)} recipe(s):"] + [f"  {row.name:<24} {row.status:<8} {row.summary}" for row in recipes]
            commands = self.recipe_commands()
            if commands:
                lines.append("Slash commands from recipes: " + " ".join(f"/{name}" for name in commands))
            await self.host.add_notice("\n".join(lines))

    async def slash_restore(self, args: str) -> None:
        name = args.strip()
        if not name:
            show_pruned(self.host, self.catalog_actions.pane())
            await self.host.add_notice("Pruned tools are listed in the catalog pane: enter or r restores the selected one (/restore NAME works too).")
            return
        catalog = catalog_of(self.host.state)
        if catalog is None:
            await self.host.add_notice("/restore failed: the tool catalog is not open", "error")
            return
        try:
            await catalog.restore(name)
        except PROJECT_FAILURES as exc:
            await self.host.add_notice(f"/restore failed: {error_message(exc)}", "error")
            return
        await self.host.add_notice(f"Restored tool {name} from git history (a new commit).")
        self.host.schedule_catalog_refresh(select=name)

    async def slash_model(self, args: str) -> None:
        agent = agent_of(self.host.state)
        if agent is None:  # (the registry's availability check said why)
            return
        name = args.strip()
        base_url = agent.client.base_url
        server, note = await server_models(agent.client) if base_url.rstrip("/") != DEFAULT_SERVER else ([], "")
        known = known_models()
        if not name:
            await self.host.add_notice(model_listing(self.host.model_name(), known, server, base_url, note))
            return
        agent.model = name
        self.host.model = self.host.model_name()
        await self.host.add_notice(f"Model set to {self.host.model_name()} for the next turns.")
        warning = unknown_model_warning(name, known, server)
        if warning:
            await self.host.add_notice(warning, "warning")

    async def slash_care(self, args: str) -> None:
        from tui_agent.ui.catalog_care import open_catalog_care

        await open_catalog_care(self.host, self.catalog_actions)

    async def slash_cost(self, args: str) -> None:
        from tui_agent.core.agent.pricing import cost_report

        agent = agent_of(self.host.state)
        if agent is None:  # (the registry's availability check said why)
            return
        await self.host.add_notice(cost_report(agent.usage, agent.model))

    async def slash_clear(self, args: str) -> None:
        if self.turns.running:
            self.turns.queue.push(f"/clear {args}".strip(), "command")  # runs when the turn is over
            return
        await self.turns.view().clear()
        runtime = self.host.runtime
        if runtime is None or agent_of(runtime) is None:
            await self.host.add_notice("Conversation cleared.")
            return
        earlier = runtime.core.session
        await asyncio.to_thread(runtime.new_session)  # a new session file: /resume finds the earlier one
        self.host.usage = UsageFigures()
        back = f"; /resume {earlier.id} goes back to the earlier one" if earlier is not None and earlier.path.exists() else ""
        await self.host.add_notice(f"Conversation cleared: a new session started{back}.")

    async def slash_compact(self, args: str) -> None:
        from tui_agent.ui.context_usage import run_compact

        await run_compact(self.host, self.turns, args)

    async def slash_resume(self, args: str) -> None:
        from tui_agent.core.agent.sessions import list_sessions, session_path
        from tui_agent.core.project import Project

        if self.turns.running:
            self.turns.queue.push(f"/resume {args}".strip(), "command")  # runs when the turn is over
            return
        runtime = self.host.runtime
        project = runtime.core.project if runtime is not None else Project.at(self.host.project_root)  # its sessions folder
        session_id = args.strip()
        if not session_id:
            current = runtime.core.session.id if runtime is not None and runtime.core.session is not None else None
            sessions = [info for info in await asyncio.to_thread(list_sessions, project) if info.id != current]
            labels = await asyncio.to_thread(lambda: [session_label(info.path, info.modified, info.model, info.first_prompt) for info in sessions[:50]])
            choices = [Choice(info.id, label) for info, label in zip(sessions[:50], labels, strict=True)]
            picked = await self.host.ask(ChoiceScreen("Resume a session", choices, empty="no earlier sessions in .agent/sessions"))
            session_id = picked or ""
            if not session_id:
                return
        try:
            path = session_path(project, session_id)
            if runtime is not None and agent_of(runtime) is not None:
                await asyncio.to_thread(runtime.resume, session_id)  # the core switches session, messages and usage
        except LookupError as exc:
            await self.host.add_notice(str(exc), "error")
            return
        last_usage = await self.turns.show_session(path, session_id)
        agent = agent_of(self.host.state)
        if agent is None:
            await self.host.add_notice("(shown only: no model is configured to continue it)", "warning")
        else:
            self.host.usage = resumed_figures(agent, last_usage)
