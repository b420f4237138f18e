"""The command registry's source of Markdown slash commands: a trusted project's and the person's own command files."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.core.agent.md_commands import MarkdownCommand, command_folders, find_commands
from tui_agent.core.runtime_parts import TrustedState
from tui_agent.ui.command_registry import Command, CommandRegistry

if TYPE_CHECKING:
    from tui_agent.ui.host import UIHost
    from tui_agent.ui.turn import TurnRunner

Signature = tuple[tuple[str, int], ...]


class MarkdownCommandSource:
    """Called each time the registry lists its commands: re-reads the files only when one of them changed, and warns
    once about a file whose name a built-in command already has (it is skipped)."""

    def __init__(self, host: UIHost, registry: CommandRegistry, turns: TurnRunner, home: Path | None = None) -> None:
        self.host, self.registry, self.turns = host, registry, turns
        self.home = home
        self._signature: Signature = ()
        self._commands: list[Command] = []
        self._warned: set[Path] = set()

    def __call__(self) -> list[Command]:
        root = self.host.project_root if isinstance(self.host.state, TrustedState) else None
        home = self.home or Path.home()
        signature = _signature(command_folders(root, home))
        if signature != self._signature:
            self._signature = signature
            self._commands = self._build(find_commands(root, home))
        return self._commands

    def _build(self, found: list[MarkdownCommand]) -> list[Command]:
        builtins = set(self.registry.builtin_names())
        commands: list[Command] = []
        for command in found:
            if command.name in builtins:
                if command.path not in self._warned:
                    self._warned.add(command.path)
                    self.host.notify(f"{command.path}: /{command.name} is a built-in command; this file is skipped",
                                     severity="warning")
                continue
            commands.append(Command(command.name, command.description, self._handler(command), source=command.origin))
        return commands

    def _handler(self, command: MarkdownCommand) -> Callable[[str], Awaitable[None]]:
        async def send(args: str) -> None:
            self.turns.start(command.expand(args))

        return send


def _signature(folders: list[tuple[Path, str]]) -> Signature:
    """Each folder's and command file's modification time: a change to any of them is a change of the commands."""
    stamps: list[tuple[str, int]] = []
    for folder, _origin in folders:
        try:
            stamps.append((str(folder), folder.stat().st_mtime_ns))
            stamps.extend((str(path), path.stat().st_mtime_ns) for path in sorted(folder.glob("*.md")))
        except OSError:
            continue
    return tuple(stamps)
