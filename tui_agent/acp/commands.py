"""Slash commands offered to an ACP client (`available_commands_update`): /init, /undo and the recipes' commands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from acp.schema import AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, UnstructuredCommandInput

from tui_agent.core.slashline import SlashCommand
from tui_agent.core.errors import PROJECT_FAILURES
from tui_agent.core.agent.instructions import init_prompt
from tui_agent.core.runtime_state import agent_of, recipes_of

if TYPE_CHECKING:
    from tui_agent.core.runtime import Runtime

BUILTIN = {"init": ("ask the model to draft AGENTS.md (the project's instructions) from the repository", "a focus"),
           "undo": ("undo the last turn: the files it changed and the tools it authored", None)}



def recipe_commands(runtime: Runtime) -> list[tuple[str, str]]:
    recipes = recipes_of(runtime)
    return [(name, text) for name, text in recipes.slash_commands() if name not in BUILTIN] if recipes is not None else []


def _hint(text: str) -> AvailableCommandInput:
    return AvailableCommandInput(root=UnstructuredCommandInput(hint=text))


def available(runtime: Runtime) -> AvailableCommandsUpdate:
    commands = [AvailableCommand(name=name, description=text,
                                 input=_hint(hint) if hint else None)
                for name, (text, hint) in BUILTIN.items() if name != "undo" or runtime.core.undo is not None]
    commands += [AvailableCommand(name=name, description=text, input=_hint("arguments"))
                 for name, text in recipe_commands(runtime)]
    return AvailableCommandsUpdate(session_update="available_commands_update", available_commands=commands)


def known(runtime: Runtime, slash: SlashCommand) -> bool:
    return slash.name in BUILTIN or slash.name in dict(recipe_commands(runtime))


def init_text(slash: SlashCommand) -> str:
    return init_prompt(slash.args)


async def run_without_model(runtime: Runtime, slash: SlashCommand) -> str:
    """/undo or a recipe command: what happened, in words (it is the reply the client shows)."""
    if slash.name == "undo":
        undo, agent = runtime.core.undo, agent_of(runtime)
        if undo is None or agent is None:
            return "/undo: not available (no git work tree: turns are not checkpointed)"
        result = await undo.undo_last(agent.session)
        if result.ok:
            agent.add_note(result.note_for_model)
        return result.message + (f"\n{result.conflict_diff}" if result.conflict_diff else "")
    recipes = recipes_of(runtime)
    assert recipes is not None
    try:
        runs = await recipes.run_command(slash.name, slash.args)
    except PROJECT_FAILURES as error:  # PipelineError, or the recipe failing to start: the reply says why
        return f"/{slash.name}: {getattr(error, 'message', None) or error}"
    return "\n".join(f"/{slash.name}: {run.summary}" for run in runs) or f"/{slash.name}: nothing ran"
