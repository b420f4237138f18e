"""Parsing and validating `.agent/recipes/<name>.toml`: precise errors (stage, message, line) before anything is written or run."""

from __future__ import annotations

import hashlib
import re
import tomllib
from dataclasses import replace
from typing import Any

from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.catalog.names import lookup_problem
from tui_agent.core.globs import glob_problem
from tui_agent.core.recipes.model import DEFAULT_DEBOUNCE_MS, TRIGGER_KINDS, Action, Recipe, Trigger
from tui_agent.core.recipes.placeholders import placeholder_problem

MAX_RECIPE_BYTES = 64 * 1024
MAX_DEBOUNCE_MS = 60_000
NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,63}$")
TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
RESERVED_SLASH_COMMANDS = frozenset(
    {"help", "tools", "recipes", "diff", "undo", "model", "clear", "resume", "quit", "exit", "new", "cost"}
)
TOP_LEVEL_KEYS = ("description", "enabled", "requires", "priority", "trigger", "action")
TRIGGER_KEYS = {"file_changed": ("on", "paths", "debounce_ms"), "command": ("on",), "session_start": ("on",), "tool_authored": ("on",),
                "tool_drifted": ("on",)}
ACTION_KEYS = ("tool", "args", "prompt")
TOML_POSITION = re.compile(r"\(at line (\d+), column (\d+)\)")


def recipe_name_problem(name: str) -> str | None:
    """Why `name` cannot name a recipe (file stem and slash command), or None."""
    problem = lookup_problem(name, "recipe")
    if problem is not None:
        return problem
    if not NAME_PATTERN.match(name):
        return f"{name!r} is not a valid recipe name (a letter, then up to 63 letters, digits, '_' or '-')"
    return None


def parse_recipe(name: str, source: str | bytes) -> Recipe:
    """Parse and validate one recipe; raises PipelineError naming the stage, the problem and the line."""
    problem = recipe_name_problem(name)
    if problem:
        raise PipelineError("name", problem)
    raw = source.encode("utf-8") if isinstance(source, str) else source
    if len(raw) > MAX_RECIPE_BYTES:
        raise PipelineError("read", f"the recipe file is {len(raw)} bytes, over the {MAX_RECIPE_BYTES}-byte limit")
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise PipelineError("read", f"the recipe file is not valid UTF-8 (byte {exc.start})", line) from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        position = TOML_POSITION.search(message)
        toml_line: int | None = int(position.group(1)) if position else None
        if toml_line is None and "end of document" in message:
            toml_line = max(1, len(text.splitlines()))
        raise PipelineError("parse", f"TOML syntax error: {message}", toml_line) from exc
    except ValueError as exc:  # tomllib's int() refuses numbers longer than 4300 digits
        raise PipelineError("parse", f"a number is too long: {exc}", None) from exc
    except (RecursionError, MemoryError) as exc:
        raise PipelineError("parse", f"TOML nested too deeply to read ({type(exc).__name__})", None) from None
    recipe = _validate(name, data, _Locator(text))
    return replace(recipe, source_sha=source_sha(raw))


def source_sha(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()


class _Locator:
    """Finds the line where a key (or table) was written, so field errors carry a line number."""

    HEADER = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\-\"' ]+?)\s*\]\s*(#.*)?$")

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def line_of(self, table: str | None, key: str | None = None) -> int | None:
        current: str | None = None
        key_pattern = re.compile(rf"^\s*[\"']?{re.escape(key)}[\"']?\s*=") if key else None
        dotted = re.compile(rf"^\s*{re.escape(table)}\s*\.\s*{re.escape(key)}\s*=") if table and key else None
        table_inline = re.compile(rf"^\s*{re.escape(table)}\s*=") if table else None
        for number, line in enumerate(self.lines, start=1):
            header = self.HEADER.match(line)
            if header:
                current = header.group(1).strip()
                if key is None and current == table:
                    return number
                continue
            if dotted and current is None and dotted.match(line):
                return number
            if key_pattern and current == table and key_pattern.match(line):
                return number
        if table is not None:
            for number, line in enumerate(self.lines, start=1):
                if table_inline and table_inline.match(line):
                    return number
            for number, line in enumerate(self.lines, start=1):
                header = self.HEADER.match(line)
                if header and header.group(1).strip() == table:
                    return number
        return None


def _fail(message: str, locator: _Locator, table: str | None, key: str | None = None) -> PipelineError:
    return PipelineError("schema", message, locator.line_of(table, key))


def _validate(name: str, data: dict[str, Any], where: _Locator) -> Recipe:
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            raise _fail(f"unknown key {key!r} (a recipe has: {', '.join(TOP_LEVEL_KEYS)})", where, None, key)
    description = data.get("description")
    if description is None:
        raise PipelineError("schema", 'missing "description": say in one line what the recipe does', 1)
    if not isinstance(description, str) or not description.strip():
        raise _fail('"description" must be a non-empty string', where, None, "description")
    enabled = data.get("enabled", True)
    if not isinstance(enabled, bool):
        raise _fail(f'"enabled" must be true or false, not {enabled!r}', where, None, "enabled")
    priority = data.get("priority", 0)
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise _fail(f'"priority" must be an integer (lower runs first), not {priority!r}', where, None, "priority")
    requires = data.get("requires", [])
    if not isinstance(requires, list) or not all(isinstance(item, str) for item in requires):
        raise _fail('"requires" must be a list of tool names, e.g. requires = ["format_file"]', where, None, "requires")
    for tool in requires:
        if not TOOL_NAME_PATTERN.match(tool):
            raise _fail(f'"requires" names {tool!r}, which is not a tool name', where, None, "requires")
    trigger = _trigger(name, data.get("trigger"), where)
    action = _action(data.get("action"), trigger, where)
    return Recipe(
        name=name,
        description=description.strip(),
        enabled=enabled,
        trigger=trigger,
        action=action,
        requires=tuple(dict.fromkeys(requires)),
        priority=priority,
        source_sha="",
    )


def _trigger(name: str, table: Any, where: _Locator) -> Trigger:
    if table is None:
        raise PipelineError("schema", 'missing [trigger] table, e.g. [trigger] on = "file_changed"', None)
    if not isinstance(table, dict):
        raise _fail("trigger must be a table: [trigger]", where, "trigger")
    on = table.get("on")
    if on is None:
        raise _fail(f'[trigger] needs "on", one of: {", ".join(TRIGGER_KINDS)}', where, "trigger")
    if on not in TRIGGER_KINDS:
        raise _fail(f'[trigger] on = {on!r} is not a trigger; use one of: {", ".join(TRIGGER_KINDS)}', where, "trigger", "on")
    for key in table:
        if key not in TRIGGER_KEYS[on]:
            raise _fail(f"[trigger] key {key!r} does not apply to on = {on!r} (allowed: {', '.join(TRIGGER_KEYS[on])})", where, "trigger", key)
    if on == "command" and name.lower() in RESERVED_SLASH_COMMANDS:
        raise PipelineError("name", f"/{name} is a built-in slash command; name the recipe differently", None)
    if on != "file_changed":
        return Trigger(on=on)
    paths = table.get("paths")
    if paths is None:
        raise _fail('on = "file_changed" needs "paths", a list of globs, e.g. paths = ["**/*.py"]', where, "trigger")
    if isinstance(paths, str):
        paths = [paths]
    if not isinstance(paths, list) or not paths or not all(isinstance(item, str) for item in paths):
        raise _fail('"paths" must be a non-empty list of glob strings', where, "trigger", "paths")
    for pattern in paths:
        problem = glob_problem(pattern)
        if problem:
            raise _fail(problem, where, "trigger", "paths")
    debounce = table.get("debounce_ms", DEFAULT_DEBOUNCE_MS)
    if not isinstance(debounce, int) or isinstance(debounce, bool) or not 0 <= debounce <= MAX_DEBOUNCE_MS:
        raise _fail(f'"debounce_ms" must be an integer from 0 to {MAX_DEBOUNCE_MS}, not {debounce!r}', where, "trigger", "debounce_ms")
    return Trigger(on="file_changed", paths=tuple(paths), debounce_ms=debounce)


def _action(table: Any, trigger: Trigger, where: _Locator) -> Action:
    if table is None:
        raise PipelineError("schema", 'missing [action] table: tool = "name" with args, or prompt = "..."', None)
    if not isinstance(table, dict):
        raise _fail("action must be a table: [action]", where, "action")
    for key in table:
        if key not in ACTION_KEYS:
            raise _fail(f"[action] key {key!r} is unknown (allowed: tool, args, prompt)", where, "action", key)
    tool, prompt = table.get("tool"), table.get("prompt")
    if (tool is None) == (prompt is None):
        raise _fail('[action] needs exactly one of tool = "name" or prompt = "..."', where, "action")
    if prompt is not None:
        if "args" in table:
            raise _fail('"args" only goes with tool = "...", not with a prompt', where, "action", "args")
        if not isinstance(prompt, str) or not prompt.strip():
            raise _fail('"prompt" must be a non-empty string', where, "action", "prompt")
        problem = placeholder_problem(prompt, trigger.on)
        if problem:
            raise _fail(problem, where, "action", "prompt")
        return Action(prompt=prompt)
    if not isinstance(tool, str) or not TOOL_NAME_PATTERN.match(tool):
        raise _fail(f'"tool" must name a tool (an identifier), not {tool!r}', where, "action", "tool")
    args = table.get("args", {})
    if not isinstance(args, dict):
        raise _fail('"args" must be a table, e.g. args = { path = "{path}" }', where, "action", "args")
    if not _json_like(args):
        raise _fail('"args" values must be strings, numbers, booleans, lists or tables (no dates)', where, "action", "args")
    problem = placeholder_problem(args, trigger.on)
    if problem:
        raise _fail(problem, where, "action", "args")
    return Action(tool=tool, args=args)


def _json_like(value: Any) -> bool:
    if isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, list):
        return all(_json_like(item) for item in value)
    if isinstance(value, dict):
        return all(_json_like(item) for item in value.values())
    return False
