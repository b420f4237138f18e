"""The one list of slash commands (name, description, handler, availability): dispatch, palette, completion and /help read it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass

SlashHandler = Callable[[str], Awaitable[None]]
Availability = Callable[[], "str | None"]
"""None when the command can run now; otherwise why not (shown instead of running it)."""


def always() -> str | None:
    return None


@dataclass(frozen=True)
class Command:
    """A `/name args` command; `source` is "built-in" or where it came from (a recipe)."""

    name: str
    description: str
    handler: SlashHandler
    available: Availability = always
    source: str = "built-in"

    @property
    def label(self) -> str:
        """The description as menus show it: a recipe's says so."""
        return self.description if self.source == "built-in" else f"{self.description} ({self.source})"


class CommandRegistry:
    """The built-in commands (described in one table, each handler added by the controller that runs it) in the
    table's order, then those of the dynamic sources (recipes) that do not shadow one."""

    def __init__(self, descriptions: Mapping[str, str]) -> None:
        self._descriptions = dict(descriptions)
        self._builtins: dict[str, Command] = {}
        self._sources: list[Callable[[], Iterable[Command]]] = []

    def add(self, name: str, handler: SlashHandler, available: Availability = always) -> None:
        if name in self._builtins:
            raise ValueError(f"/{name} is registered twice")
        if name not in self._descriptions:
            raise KeyError(f"/{name} has no description in the built-in commands' table")
        self._builtins[name] = Command(name, self._descriptions[name], handler, available)

    def missing(self) -> list[str]:
        """Described commands no controller added a handler for (none once the app is built)."""
        return [name for name in self._descriptions if name not in self._builtins]

    def add_source(self, source: Callable[[], Iterable[Command]]) -> None:
        """Commands that come and go (a recipe's `command` trigger): asked for each time the list is read."""
        self._sources.append(source)

    def commands(self) -> list[Command]:
        found = {name: self._builtins[name] for name in self._descriptions if name in self._builtins}
        for source in self._sources:
            for command in source():
                found.setdefault(command.name, command)
        return list(found.values())

    def find(self, name: str) -> Command | None:
        return self._builtins.get(name) or next((command for command in self.commands() if command.name == name), None)

    def builtin_names(self) -> list[str]:
        return [name for name in self._descriptions if name in self._builtins]

    def descriptions(self) -> dict[str, str]:
        """name -> label, for the prompt's completion menu."""
        return {command.name: command.label for command in self.commands()}

    def help_lines(self) -> list[str]:
        """`/help`'s list of commands."""
        return [f"  /{command.name:<8} {command.label}" for command in self.commands()]
