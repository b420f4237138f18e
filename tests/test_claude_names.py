"""Claude Code's names and flags translated: tool lists, allow rules, permission modes, flags accepted and ignored."""

from __future__ import annotations

import argparse

import pytest

from tui_agent.cli import build_parser
from tui_agent.commands.claude_flags import STDIN_PROMPT, translate
from tui_agent.core.headless.claude_names import claude_mode, claude_tool, split_tool_list, translate_rule


def parse(*argv: str) -> argparse.Namespace:
    return build_parser().parse_args(list(argv))


def test_tool_lists_split_on_commas_and_spaces_but_not_inside_parentheses() -> None:
    assert split_tool_list(["Read,Bash(git log:*)", "Edit  Bash(npm run test:*),Grep"]) == [
        "Read", "Bash(git log:*)", "Edit", "Bash(npm run test:*)", "Grep"]


def test_rules_and_names_map_both_ways() -> None:
    assert translate_rule("Bash(npm test:*)") == "run_shell(npm test:*)"
    assert translate_rule("Edit") == "edit_file" and translate_rule("mcp__time__now") == "mcp__time__now"
    assert translate_rule("WebFetch") == "WebFetch"  # no counterpart: matches nothing
    assert claude_tool("run_shell") == "Bash" and claude_tool("my_catalog_tool") == "my_catalog_tool"
    assert claude_mode("auto", bypass=False) == "acceptEdits" and claude_mode("ask", bypass=True) == "bypassPermissions"


def test_flags_translate_to_tuiagent_options() -> None:
    args = parse("--input-format", "stream-json", "--permission-mode", "plan", "--allowedTools", "Bash(make:*),Read",
                 "--disallowedTools", "Write Bash(rm:*)", "--max-turns", "3", "--permission-prompt-tool", "stdio",
                 "--fork-session", "--settings", "{}")
    assert args.prompt == STDIN_PROMPT  # stream-json input is headless without -p
    options = translate(args)
    assert options.mode == "plan" and options.ask_caller and not options.bypass and options.max_turns == 3
    assert options.allow_rules == ["run_shell(make:*)", "read_file"] and options.hidden == frozenset({"write_file"})
    assert any("Bash(rm:*)" in warning for warning in options.warnings)
    assert {w.split()[0] for w in options.warnings} >= {"--fork-session", "--settings"}
    assert translate(parse("-p", "x", "--permission-mode", "bypassPermissions")).bypass
    assert translate(parse("-p", "x", "--permission-mode", "auto")).mode == "auto"  # ours stay accepted


@pytest.mark.parametrize("argv, problem", [
    (["-p", "x", "--permission-prompt-tool", "mcp__auth__ask"], "only `stdio`"),
    (["-p", "x", "--permission-prompt-tool", "stdio"], "needs --input-format stream-json"),
    (["-p", "x", "--max-turns", "0"], "at least 1"),
])
def test_values_tuiagent_cannot_honour_are_usage_errors(argv: list[str], problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        translate(parse(*argv))


def test_subcommands_keep_their_own_long_options() -> None:
    """--allow, --allowedTools and --allowed-tools share a prefix: `mcp trust --all` must still reach its parser."""
    assert parse("mcp", "trust", "--all").all is True
