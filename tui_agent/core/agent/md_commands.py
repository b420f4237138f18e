"""Custom slash commands from Markdown files (`.agent/commands/`, `.claude/commands/`, `~/.claude/commands/`), as
Claude Code has them: `/name args` sends the file's body with `$ARGUMENTS`, `$1`, `$2`… replaced."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path

PROJECT_FOLDERS = (".agent/commands", ".claude/commands")
"""The project's own commands, in order of precedence: project content, read only when the project is trusted."""
NAME = re.compile(r"^[a-z0-9][a-z0-9_.:-]*$")
POSITIONAL = re.compile(r"\$(\d+)")
DESCRIPTION_LIMIT = 80


@dataclass(frozen=True)
class MarkdownCommand:
    """One command file: its name (the file's stem), what /help says of it, the prompt it sends, where it is."""

    name: str
    description: str
    body: str
    path: Path
    origin: str
    """Where /help says it came from: "project" or "user"."""

    def expand(self, args: str) -> str:
        """The prompt for `/name args`: `$ARGUMENTS` is all of them, `$1`… one each; unused arguments are appended,
        so nothing typed is lost."""
        args = args.strip()
        try:
            words = shlex.split(args)
        except ValueError:  # an unclosed quote: plain words
            words = args.split()
        used = "$ARGUMENTS" in self.body or POSITIONAL.search(self.body) is not None
        text = self.body.replace("$ARGUMENTS", args)
        text = POSITIONAL.sub(lambda match: _word(words, int(match.group(1))), text)
        if args and not used:
            text = f"{text.rstrip()}\n\n{args}"
        return text.strip()


def _word(words: list[str], number: int) -> str:
    return words[number - 1] if 0 < number <= len(words) else ""


def split_frontmatter(text: str) -> tuple[dict[str, str], str]:
    """A leading `---` block's `key: value` lines, and the text after it (the prompt); no block: ({}, text)."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return {}, text
    for index, line in enumerate(lines[1:], start=1):
        if line.strip() == "---":
            fields: dict[str, str] = {}
            for entry in lines[1:index]:
                key, colon, value = entry.partition(":")
                if colon and key.strip() and not key.startswith((" ", "\t")):
                    fields[key.strip().lower()] = value.strip().strip("'\"")
            return fields, "".join(lines[index + 1:])
    return {}, text


def read_command(path: Path, origin: str) -> MarkdownCommand | None:
    """The command a file defines; None when its name cannot be typed or it cannot be read."""
    name = path.stem.lower()
    if not NAME.match(name):
        return None
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    fields, body = split_frontmatter(text)
    first = next((line.strip().lstrip("# ") for line in body.splitlines() if line.strip()), "")
    description = (fields.get("description") or first or "(empty command)")[:DESCRIPTION_LIMIT]
    return MarkdownCommand(name, description, body, path, origin)


def command_folders(project_root: Path | None, home: Path) -> list[tuple[Path, str]]:
    """The folders to read, in order of precedence: the project's (when given: only a trusted one), then the person's."""
    folders = [(project_root / folder, "project") for folder in PROJECT_FOLDERS] if project_root is not None else []
    return [*folders, (home / ".claude" / "commands", "user")]


def find_commands(project_root: Path | None, home: Path) -> list[MarkdownCommand]:
    """Every command of those folders; a name found in an earlier folder hides the same name in a later one."""
    found: dict[str, MarkdownCommand] = {}
    for folder, origin in command_folders(project_root, home):
        try:
            paths = sorted(path for path in folder.glob("*.md") if path.is_file())
        except OSError:
            continue
        for path in paths:
            command = read_command(path, origin)
            if command is not None and command.name not in found:
                found[command.name] = command
    return list(found.values())


SLASH = re.compile(r"^/([A-Za-z0-9][A-Za-z0-9_.:-]*)(?:\s+(.*))?$", re.DOTALL)


def expand_slash(prompt: str, project_root: Path | None, home: Path) -> str:
    """A headless prompt `/name args` naming a command file: the prompt it sends; any other prompt as it is."""
    match = SLASH.match(prompt.strip())
    if match is None:
        return prompt
    name = match.group(1).lower()
    command = next((found for found in find_commands(project_root, home) if found.name == name), None)
    return command.expand(match.group(2) or "") if command is not None else prompt
