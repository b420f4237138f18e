"""Slash commands typed in the prompt: parsing, and the built-in commands' descriptions (command_registry lists them)."""

from __future__ import annotations


from tui_agent.core.slashline import SlashCommand as SlashCommand, parse_slash as parse_slash

BUILTIN_COMMANDS: dict[str, str] = {
    "help": "show commands and keys",
    "tools": "list the catalog and focus the catalog pane",
    "diff": "show the last turn's changes to project files, shell commands' included (/diff [TURN])",
    "undo": "undo the last turn: the files it changed and the tools it authored",
    "rewind": "undo an earlier turn and every later one (/rewind [TURN])",
    "redo": "take back the last /undo or /rewind (before any new turn)",
    "permissions": "list the allow rules; /permissions remove [RULE] removes one after asking",
    "model": "list the models (the SDK's, the server's), or switch with /model NAME",
    "cost": "show the session's tokens and cost (cache writes and reads at their prices)",
    "clear": "clear the conversation and start a new session",
    "copy": "copy the last reply to the clipboard (/copy code: its last code block)",
    "theme": "switch the colours: /theme light or /theme dark",
    "compact": "free context: the model summarizes the conversation, which continues from the summary (/compact focus on X)",
    "resume": "resume an earlier session (/resume [ID])",
    "restore": "bring back a pruned tool (/restore NAME; alone: list the pruned tools)",
    "recipes": "list the recipes",
    "care": "suggested tools from repeated call chains, and the catalog doctor's findings (c in the catalog)",
    "commit": "run your git hooks and commit the catalog changes held since agent code wrote the project",
    "trust": "see what the project grants and trust it (reopens it with its tools, recipes and MCP servers)",
    "init": "ask the model to draft AGENTS.md (the project's instructions) from the repository (/init [FOCUS])",
}



def unescape_prompt(text: str) -> str:
    """A prompt beginning with `//` is sent with one slash."""
    stripped = text.lstrip()
    return stripped[1:] if stripped.startswith("//") else text
