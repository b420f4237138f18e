"""Allow rules in the style of Claude Code's `permissions.allow`: `run_shell(pytest:*)`, `run_shell(make test)`, `write_file`."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from tui_agent.core.hostnames import check_names, name_granted
from tui_agent.core.errors import TuiAgentError

RULE_SYNTAX = re.compile(r"^(?P<tool>[A-Za-z_][A-Za-z0-9_]*)(?:\((?P<pattern>.+)\))?$", re.DOTALL)
PREFIX_SUFFIX = ":*"
CONTROL_OPERATORS = {"&&", "||", ";", "|", "&", "|&", ";;", "\n"}
REDIRECTIONS = {">", ">>", "&>", "&>>", ">|", ">&", "<>", "<", "<<", "<<<", "<&"}
WRITING_REDIRECTIONS = {">", ">>", "&>", "&>>", ">|", ">&", "<>"}
HARMLESS_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr"}
"""Redirection targets a prefix rule still covers: every other file a redirection writes must be named by the rule."""
UNSAFE_FOR_PATTERNS = ("$(", "`", "<(", ">(")
"""A command holding one of these runs a hidden command; only a tool-wide rule or an exact rule covers it."""
MULTI_WORD_RUNNERS = {"npm", "pnpm", "yarn", "cargo", "go", "uv", "poetry", "git", "make", "pip", "pip3", "docker",
                      "npx", "bundle", "dotnet", "gradle", "mvn", "rake", "hatch", "pdm", "tox", "nox", "just"}
PATTERN_TOOLS = ("run_shell",)
"""Tools whose requests carry a command that patterns match; other tools take only the tool-wide rule."""
DOMAIN_TOOLS = ("web_fetch",)
"""Tools whose rules name a host: `web_fetch(domain:docs.python.org)`, `web_fetch(domain:*.python.org)`."""
DOMAIN_PREFIX = "domain:"


class RuleError(TuiAgentError, ValueError):
    """A rule is not in the `tool`, `tool(exact command)` or `tool(prefix:*)` syntax."""


@dataclass(frozen=True)
class Rule:
    """`tool` alone allows every call of the tool; with `pattern`, the exact command, or commands starting with it."""

    tool: str
    pattern: str | None = None
    prefix: bool = False

    @property
    def text(self) -> str:
        if self.pattern is None:
            return self.tool
        return f"{self.tool}({self.pattern}{PREFIX_SUFFIX if self.prefix else ''})"

    def matches(self, tool: str, subject: str | None, network: bool) -> bool:
        """Whether this rule approves a call of `tool` on `subject` (a network call needs a tool-wide rule)."""
        if tool != self.tool:
            return False
        if self.pattern is None:
            return True
        if tool in DOMAIN_TOOLS:
            return subject is not None and subject.startswith(DOMAIN_PREFIX) and \
                name_granted(subject[len(DOMAIN_PREFIX):], (self.pattern[len(DOMAIN_PREFIX):],))
        if network or subject is None:
            return False
        if not self.prefix:
            return subject.strip() == self.pattern.strip()
        parts = simple_commands(subject)
        if parts is None or not all(_starts_with(words, self.pattern) for words in parts):
            return False
        written = file_redirections(parts)
        named = file_redirections(simple_commands(self.pattern) or [])
        return written is not None and named is not None and set(written) <= set(named)


def parse_rule(text: str) -> Rule:
    """A Rule from its text; RuleError says what is wrong and what the syntax is."""
    match = RULE_SYNTAX.match(text.strip()) if isinstance(text, str) else None
    if match is None:
        raise RuleError(f"{text!r} is not an allow rule: use TOOL, TOOL(exact command) or TOOL(prefix:*), "
                        "e.g. run_shell(pytest:*)")
    tool, pattern = match.group("tool"), match.group("pattern")
    if pattern is None:
        return Rule(tool)
    if tool in DOMAIN_TOOLS:
        return _domain_rule(text, tool, pattern.strip())
    if tool not in PATTERN_TOOLS:
        raise RuleError(f"{text!r}: only {', '.join(PATTERN_TOOLS)} takes a command pattern; allow the whole tool with {tool}")
    prefix = pattern.endswith(PREFIX_SUFFIX)
    body = pattern[: -len(PREFIX_SUFFIX)].strip() if prefix else pattern.strip()
    if not body:
        raise RuleError(f"{text!r}: the command pattern is empty")
    if prefix and simple_commands(body) != [shlex.split(body)]:
        raise RuleError(f"{text!r}: a prefix must be plain words (no ;, &&, |, $( or backticks)")
    return Rule(tool, body, prefix)


def _domain_rule(text: str, tool: str, pattern: str) -> Rule:
    host = pattern[len(DOMAIN_PREFIX):].strip().lower().rstrip(".") if pattern.startswith(DOMAIN_PREFIX) else ""
    try:
        check_names([host], "the host")
    except ValueError:
        host = ""
    if not host:
        raise RuleError(f"{text!r}: {tool} takes a host, as in {tool}(domain:docs.python.org) or "
                        f"{tool}(domain:*.python.org)")
    return Rule(tool, DOMAIN_PREFIX + host)


def simple_commands(command: str) -> list[list[str]] | None:
    """The words of each simple command in `command`, or None when it cannot be split safely.

    A redirection operator (`>`, `2>`'s `>`, `&>`, `>>`, `<`) is a word of its own, so `git status>x` and
    `git status > x` both read as `git status > x`."""
    if any(marker in command for marker in UNSAFE_FOR_PATTERNS):
        return None
    lexer = shlex.shlex(command.replace("\n", " ; "), posix=True, punctuation_chars=";&|<>")
    lexer.whitespace_split = True
    lexer.commenters = ""  # shlex would drop the rest of the line at a `#` inside a word, where the shell does not
    parts: list[list[str]] = [[]]
    try:
        for token in lexer:
            if token in CONTROL_OPERATORS:
                parts.append([])
            elif token in REDIRECTIONS:
                parts[-1].append(token)
            elif set(token) <= set(";&|<>"):
                return None
            else:
                parts[-1].append(token)
    except ValueError:  # an unclosed quote
        return None
    commands = [words for words in parts if words]
    return commands or None


def file_redirections(parts: list[list[str]]) -> list[str] | None:
    """The files the commands' redirections write (`>`, `>>`, `2>`, `&>`, `>|`, `<>`, `>& file`), without
    /dev/null and descriptor copies (`2>&1`); None when a redirection has no target."""
    written: list[str] = []
    for words in parts:
        for index, word in enumerate(words):
            if word not in WRITING_REDIRECTIONS:
                continue
            if index + 1 >= len(words):
                return None
            target = words[index + 1]
            if word.endswith("&") and (target.isdigit() or target == "-"):
                continue  # 2>&1, >&-: a descriptor, not a file
            if target not in HARMLESS_TARGETS:
                written.append(target)
    return written


def _starts_with(words: list[str], prefix: str) -> bool:
    wanted = shlex.split(prefix)
    return words[: len(wanted)] == wanted


def suggested_rule(tool: str, subject: str | None, network: bool = False) -> str:
    """The narrowest rule that covers a request: `run_shell(python -m pytest:*)`, else the exact command, else the
    tool's name (a network call, or a command whose prefix rule would not cover its redirections)."""
    candidates: list[Rule] = []
    if tool in DOMAIN_TOOLS and subject and subject.startswith(DOMAIN_PREFIX):
        return Rule(tool, subject).text
    if tool in PATTERN_TOOLS and subject and "\n" not in subject:
        prefix = suggested_prefix(subject)
        candidates = [Rule(tool, prefix, prefix=True)] if prefix else []
        candidates.append(Rule(tool, subject.strip()))
    return next((rule.text for rule in candidates if rule.matches(tool, subject, network)), Rule(tool).text)


def suggested_prefix(command: str) -> str | None:
    """The prefix offered for "always allow commands like this": `pytest`, `npm run`, `python -m pytest`."""
    parts = simple_commands(command)
    if not parts or len(parts) != 1:
        return None
    words = parts[0]
    if "=" in words[0]:
        return None
    if words[0] in ("python", "python3") and len(words) >= 3 and words[1] == "-m":
        return shlex.join(words[:3])
    if words[0] in MULTI_WORD_RUNNERS and len(words) >= 2 and not words[1].startswith("-"):
        return shlex.join(words[:2])
    return shlex.join(words[:1])
