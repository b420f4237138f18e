"""Recipe file format: valid files parse; every bad file gets a precise error with the right stage and line."""

from __future__ import annotations

import pytest

from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.globs import glob_problem, matches
from tui_agent.core.recipes.placeholders import fill_value
from tui_agent.core.recipes.recipefile import parse_recipe

VALID = """\
description = "Format Python files when they change"
enabled = true
requires = ["format_file"]
priority = 5

[trigger]
on = "file_changed"
paths = ["*.py", "src/**/*.py"]
debounce_ms = 150

[action]
tool = "format_file"
args = { path = "{path}", everything = "{paths}", note = "literal {{braces}}" }
"""


def test_valid_file_changed_recipe() -> None:
    recipe = parse_recipe("fmt", VALID)
    assert recipe.trigger.on == "file_changed"
    assert recipe.trigger.paths == ("*.py", "src/**/*.py")
    assert recipe.trigger.debounce_ms == 150
    assert recipe.action.tool == "format_file" and recipe.action.kind == "tool"
    assert recipe.requires == ("format_file",) and recipe.priority == 5 and recipe.enabled
    assert len(recipe.source_sha) == 64


@pytest.mark.parametrize(
    ("trigger", "action"),
    [
        ('on = "command"', 'prompt = "Explain {args}"'),
        ('on = "session_start"', 'prompt = "Say hello"'),
        ('on = "tool_authored"', 'tool = "run_tests"\nargs = { tool = "{name}" }'),
    ],
)
def test_each_trigger_kind_parses(trigger: str, action: str) -> None:
    recipe = parse_recipe("r1", f'description = "d"\n[trigger]\n{trigger}\n[action]\n{action}\n')
    assert recipe.trigger.on in trigger
    assert recipe.enabled is True and recipe.priority == 0 and recipe.requires == ()


def test_action_tool_counts_as_required() -> None:
    recipe = parse_recipe("r", 'description = "d"\nrequires = ["a"]\n[trigger]\non = "session_start"\n[action]\ntool = "b"\n')
    assert recipe.needed_tools == ("a", "b")


def error_of(name: str, source: str | bytes) -> PipelineError:
    with pytest.raises(PipelineError) as info:
        parse_recipe(name, source)
    return info.value


@pytest.mark.parametrize(
    ("mutate", "stage", "line", "fragment"),
    [
        (lambda s: s.replace("[action]", "[action"), "parse", 11, "TOML syntax error"),
        (lambda s: s.replace('enabled = true', 'enabled = tru'), "parse", 2, "TOML syntax error"),
        (lambda s: s.replace('on = "file_changed"', 'on = "file_change"'), "schema", 7, "not a trigger"),
        (lambda s: s.replace('description = "Format Python files when they change"\n', ""), "schema", 1, "missing \"description\""),
        (lambda s: s.replace("description", "descripton"), "schema", 1, "unknown key 'descripton'"),
        (lambda s: s.replace("enabled = true", 'enabled = "yes"'), "schema", 2, "true or false"),
        (lambda s: s.replace('paths = ["*.py", "src/**/*.py"]\n', ""), "schema", 6, 'needs "paths"'),
        (lambda s: s.replace('"src/**/*.py"', '"/etc/*.py"'), "schema", 8, "absolute"),
        (lambda s: s.replace('"src/**/*.py"', '"../x/*.py"'), "schema", 8, "leaves the project"),
        (lambda s: s.replace("debounce_ms = 150", "debounce_ms = -1"), "schema", 9, "debounce_ms"),
        (lambda s: s.replace('"{path}"', '"{args}"'), "schema", 13, "only available with on = 'command'"),
        (lambda s: s.replace('"{path}"', '"{pth}"'), "schema", 13, "unknown placeholder {pth}"),
        (lambda s: s.replace('tool = "format_file"', 'tool = "format file"'), "schema", 12, "must name a tool"),
        (lambda s: s.replace('tool = "format_file"', 'tool = "format_file"\nprompt = "x"'), "schema", 11, "exactly one of"),
        (lambda s: s.replace('tool = "format_file"', 'prompt = "x"'), "schema", 13, '"args" only goes with tool'),
        (lambda s: s.replace('requires = ["format_file"]', 'requires = "format_file"'), "schema", 3, "list of tool names"),
        (lambda s: s.replace("priority = 5", "priority = 1.5"), "schema", 4, "integer"),
        (lambda s: s + "extra = 1\n", "schema", 14, "[action] key 'extra'"),
        (lambda s: s.replace("debounce_ms = 150", "delay = 150"), "schema", 9, "does not apply"),
    ],
)
def test_bad_recipe_errors(mutate, stage: str, line: int, fragment: str) -> None:
    error = error_of("fmt", mutate(VALID))
    assert error.stage == stage
    assert error.line == line, error.to_dict()
    assert fragment in error.message


def test_missing_tables_and_names() -> None:
    assert "missing [trigger]" in error_of("r", 'description = "d"\n[action]\nprompt = "p"\n').message
    assert "missing [action]" in error_of("r", 'description = "d"\n[trigger]\non = "session_start"\n').message
    assert error_of("bad name", VALID).stage == "name"
    assert error_of("help", 'description = "d"\n[trigger]\non = "command"\n[action]\nprompt = "p"\n').stage == "name"
    non_utf8 = error_of("r", b'description = "d"\n\xff\xfe\n')
    assert non_utf8.stage == "read" and non_utf8.line == 2
    assert error_of("r", b"#" * 70_000).stage == "read"


def test_toml_dates_are_refused_in_args() -> None:
    error = error_of("r", 'description = "d"\n[trigger]\non = "session_start"\n[action]\ntool = "t"\nargs = { when = 2024-01-01 }\n')
    assert error.line == 6 and "no dates" in error.message


@pytest.mark.parametrize(
    ("path", "patterns", "expected"),
    [
        ("app.py", ["*.py"], True),
        ("pkg/sub/mod.py", ["*.py"], True),
        ("src/a.py", ["src/**/*.py"], True),
        ("src/x/y/a.py", ["src/**/*.py"], True),
        ("lib/src/a.py", ["src/**/*.py"], False),
        ("src/a.txt", ["src/*.py"], False),
        ("src/x/a.py", ["src/*.py"], False),
        ("docs/a.md", ["docs/**"], True),
        ("a1.py", ["a[0-9].py"], True),
        ("ab.py", ["a[!0-9].py"], True),
        ("weird", ["./weird"], True),
        ("sub/weird", ["./weird"], False),
    ],
)
def test_globs(path: str, patterns: list[str], expected: bool) -> None:
    assert matches(path, patterns) is expected


def test_glob_problems() -> None:
    assert glob_problem("a[") is not None
    assert glob_problem("") is not None
    assert glob_problem("src/*.py") is None


def test_placeholders_fill() -> None:
    args = {"path": "{path}", "all": "{paths}", "joined": "x {paths}", "nested": ["{path}"], "n": 3, "lit": "{{x}}"}
    filled = fill_value(args, {"path": "a.py", "paths": "a.py b.py"}, {"paths": ["a.py", "b.py"]})
    assert filled == {"path": "a.py", "all": ["a.py", "b.py"], "joined": "x a.py b.py", "nested": ["a.py"], "n": 3, "lit": "{x}"}


def test_format_help_example_is_a_valid_recipe() -> None:
    from tui_agent.core.recipes import FORMAT_HELP

    lines = FORMAT_HELP.splitlines()
    example = "\n".join(line.strip() for line in lines[1 : lines.index(next(text for text in lines if text.startswith("Placeholders")))])
    recipe = parse_recipe("example", example)
    assert recipe.trigger.on == "file_changed" and recipe.action.tool == "tool_name" and recipe.requires == ("tool_name",)


def test_this_repositorys_own_recipes_are_valid() -> None:
    from pathlib import Path

    folder = Path(__file__).resolve().parent.parent / ".agent" / "recipes"
    files = sorted(folder.glob("*.toml"))
    assert files
    for file in files:
        parse_recipe(file.stem, file.read_bytes())
