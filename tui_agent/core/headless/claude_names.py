"""Claude Code's names mapped to tuiagent's: tools (for --allowedTools/--disallowedTools and can_use_tool) and
permission modes (default, acceptEdits, plan, bypassPermissions, dontAsk; tuiagent's own stay accepted)."""

from __future__ import annotations

import re

TOOL_NAMES: dict[str, str] = {
    "Bash": "run_shell",
    "Read": "read_file",
    "Write": "write_file",
    "Edit": "edit_file",
    "MultiEdit": "edit_file",
    "NotebookEdit": "edit_file",
    "Glob": "list_files",
    "LS": "list_files",
    "Grep": "grep",
}
"""Claude Code's built-in tool → tuiagent's. Names not listed (tuiagent's own, catalog tools, `mcp__server__tool`)
pass through unchanged; Claude Code tools tuiagent has no counterpart for (WebFetch, WebSearch, Task, TodoWrite...)
match nothing."""

CLAUDE_NAMES: dict[str, str] = {"run_shell": "Bash", "read_file": "Read", "write_file": "Write", "edit_file": "Edit",
                                "list_files": "Glob", "grep": "Grep"}
"""tuiagent's built-in → the Claude Code name reported to a `can_use_tool` callback."""

MODES: dict[str, str] = {"default": "ask", "acceptEdits": "auto", "plan": "plan", "bypassPermissions": "ask",
                         "dontAsk": "ask", "ask": "ask", "auto": "auto", "read-only": "read-only"}
"""--permission-mode value → tuiagent's mode. bypassPermissions also approves everything (like --yes); dontAsk denies
what no rule allows without asking."""

CLAUDE_MODES: dict[str, str] = {"ask": "default", "auto": "acceptEdits", "read-only": "plan", "plan": "plan"}

RULE = re.compile(r"^(?P<tool>[A-Za-z0-9_.*-]+)(?P<rest>\(.*\))?$", re.S)


def our_tool(name: str) -> str:
    return TOOL_NAMES.get(name, name)


def claude_tool(name: str) -> str:
    return CLAUDE_NAMES.get(name, name)


def claude_mode(mode: str, *, bypass: bool) -> str:
    """The mode under Claude Code's name, for the init line."""
    return "bypassPermissions" if bypass else CLAUDE_MODES.get(mode, "default")


def split_tool_list(values: list[str]) -> list[str]:
    """`--allowedTools "Read,Bash(git log:*)" Edit` → each rule: commas and spaces separate, except inside parentheses."""
    rules: list[str] = []
    for value in values:
        depth, current = 0, ""
        for char in value:
            depth += (char == "(") - (char == ")")
            if depth == 0 and (char == "," or char.isspace()):
                rules.append(current)
                current = ""
            else:
                current += char
        rules.append(current)
    return [rule.strip() for rule in rules if rule.strip()]


def translate_rule(rule: str) -> str:
    """`Bash(npm test:*)` → `run_shell(npm test:*)`; a rule for a tool tuiagent does not know stays as it is."""
    match = RULE.match(rule.strip())
    if match is None:
        return rule.strip()
    return our_tool(match.group("tool")) + (match.group("rest") or "")
