"""A typed `/name args` line: the one parser every front end (TUI, ACP) uses for slash commands."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SlashCommand:
    """A parsed `/name args` line."""

    name: str
    args: str


def parse_slash(text: str) -> SlashCommand | None:
    """`/name rest` as a SlashCommand; None for ordinary prompts (including `//escaped` and paths like `/usr/bin`)."""
    stripped = text.strip()
    if not stripped.startswith("/") or stripped.startswith("//"):
        return None
    head, _, rest = stripped[1:].partition(" ")
    name = head.strip()
    if not name or "/" in name or "\n" in name:
        return None
    return SlashCommand(name=name.lower(), args=rest.strip())
