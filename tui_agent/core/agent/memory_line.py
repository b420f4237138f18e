"""`# a line` typed as a prompt: the line appended as a bullet to the project's instructions file (AGENTS.md, or
CLAUDE.md where that is the one the project has), and the note that tells a running conversation about it."""

from __future__ import annotations

from pathlib import Path

from tui_agent.core.agent.instructions import PROJECT_FILES
from tui_agent.core.agent.paths import confine


def memory_line(prompt: str) -> str | None:
    """The line of a one-line prompt `# text` (not `##…`, a heading, nor a prompt of several lines); else None."""
    stripped = prompt.strip()
    if not stripped.startswith("#") or stripped.startswith("##") or "\n" in stripped:
        return None
    line = stripped[1:].strip()
    return line or None


def instructions_file(root: Path) -> str:
    """The project's instructions file to add to: the first of AGENTS.md, CLAUDE.md that exists, else AGENTS.md."""
    for name in PROJECT_FILES:
        if (root / name).is_file():
            return name
    return PROJECT_FILES[0]


def add_instruction(root: Path, line: str) -> str:
    """Append `- line` to the instructions file (created if there is none) and return its name. A file that is a link
    out of the project is refused (PathRefused), as it is never read as instructions."""
    name = instructions_file(root)
    path = confine(root, name)
    try:
        existing = path.read_bytes()
    except FileNotFoundError:
        existing = b""
    separator = "\n" if existing and not existing.endswith(b"\n") else ""
    with path.open("a", encoding="utf-8") as handle:
        handle.write(f"{separator}- {line}\n")
    return name


def instruction_note(name: str, line: str) -> str:
    """What the model is told in a running conversation (its system prompt stays as it was, for the prompt cache)."""
    return f"The person added this line to {name}, the project's instructions; follow it from now on:\n- {line}"
