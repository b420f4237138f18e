"""Schema building from signatures and Google-style docstrings, and the static checks on tool files."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path
from typing import Literal, Optional

import pytest

from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.catalog.inspector import inspect_tool_file
from tui_agent.core.catalog.schema import SchemaError, build_schema, split_docstring
from tui_agent.core.catalog.toolfile import MAX_TOOL_BYTES, check_tool_bytes


def sample(
    name: str,
    count: int,
    ratio: float = 0.5,
    verbose: bool = False,
    tags: list[str] | None = None,
    weights: dict[str, float] = {},  # noqa: B006 - a JSON default
    mode: Literal["fast", "slow"] = "fast",
    limit: Optional[int] = None,
    matrix: list[list[int]] = [],  # noqa: B006
) -> str:
    """Find flaky recipe runs.

    A longer explanation that is not part of the summary.

    Args:
        name: The recipe name,
            continued on a second line.
        count (int): How many runs to look at.
        ratio: Failure ratio threshold.
        tags: Optional tags.

    Returns:
        A report.
    """
    return ""


def test_schema_covers_every_supported_annotation() -> None:
    schema = build_schema(sample)
    assert schema["name"] == "sample"
    assert schema["description"] == "Find flaky recipe runs."
    props = schema["input_schema"]["properties"]
    assert schema["input_schema"]["required"] == ["name", "count"]
    assert props["name"] == {"type": "string", "description": "The recipe name, continued on a second line."}
    assert props["count"] == {"type": "integer", "description": "How many runs to look at."}
    assert props["ratio"] == {"type": "number", "description": "Failure ratio threshold.", "default": 0.5}
    assert props["verbose"] == {"type": "boolean", "default": False}
    assert props["tags"] == {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "null"}],
                             "description": "Optional tags.", "default": None}
    assert props["weights"] == {"type": "object", "additionalProperties": {"type": "number"}, "default": {}}
    assert props["mode"] == {"type": "string", "enum": ["fast", "slow"], "default": "fast"}
    assert props["limit"] == {"type": ["integer", "null"], "default": None}
    assert props["matrix"]["items"] == {"type": "array", "items": {"type": "integer"}}


def test_future_annotations_are_resolved(tmp_path: Path) -> None:
    path = tmp_path / "later.py"
    path.write_text(textwrap.dedent('''
        from __future__ import annotations
        from typing import Literal

        def later(x: int | None = None, kind: Literal["a", "b"] = "a") -> list[str]:
            """Use string annotations.

            Args:
                x: A number.
            """
            return []
    '''))
    result = inspect_tool_file(str(path), "later", run_tests=False)
    assert result["ok"], result
    props = result["schema"]["input_schema"]["properties"]
    assert props["x"] == {"type": ["integer", "null"], "description": "A number.", "default": None}
    assert props["kind"]["enum"] == ["a", "b"]
    assert "required" not in result["schema"]["input_schema"]


@pytest.mark.parametrize(
    "signature, param",
    [
        ("x: set[int]", "x"),
        ("x: dict[int, str]", "x"),
        ("x: int | str", "x"),
        ("x", "x"),
        ("*args: int", "args"),
        ("y: int, x: bytes = b''", "x"),
    ],
)
def test_unsupported_annotations_name_the_parameter(signature: str, param: str) -> None:
    namespace: dict = {}
    exec(f"def tool({signature}):\n    'Doc.'\n", namespace)
    with pytest.raises(SchemaError) as info:
        build_schema(namespace["tool"])
    assert info.value.param == param
    assert repr(param) in str(info.value)


def test_docstring_summary_spans_lines_and_stops_at_sections() -> None:
    summary, args = split_docstring("Line one\nline two.\n\nArgs:\n    a: first\n    b (str): second\n        more\n")
    assert summary == "Line one line two."
    assert args == {"a": "first", "b": "second more"}


GOOD = 'def tool(x: int) -> int:\n    """Double x.\n\n    Args:\n        x: a number\n    """\n    return 2 * x\n'


@pytest.mark.parametrize(
    "name, data, stage, line",
    [
        ("tool", b"def tool(x:\n    pass\n", "parse", 1),
        ("tool", b"x = 1\n\n\ndef tool(:\n", "parse", 4),
        ("tool", b"def other():\n    'doc'\n", "parse", None),
        ("tool", b"x = 1\ndef tool():\n    return 1\n", "parse", 2),
        ("tool", b"async def tool():\n    'doc'\n", "parse", 1),
        ("tool", b"# caf\xe9\ndef tool():\n    'doc'\n", "read", 1),
        ("tool", b"#" * (MAX_TOOL_BYTES + 1), "read", None),
        ("9tool", GOOD.encode(), "name", None),
        ("bad-name", GOOD.encode(), "name", None),
        ("class", GOOD.encode(), "name", None),
        ("read_file", GOOD.encode(), "name", None),
        ("run_shell", GOOD.encode(), "name", None),
    ],
)
def test_static_checks_give_stage_and_line(name: str, data: bytes, stage: str, line: int | None) -> None:
    with pytest.raises(PipelineError) as info:
        check_tool_bytes(name, data)
    assert info.value.stage == stage, info.value
    assert info.value.line == line
    assert info.value.to_dict()["stage"] == stage


def test_good_file_passes_static_checks() -> None:
    assert check_tool_bytes("tool", GOOD.encode()) == GOOD


def test_inspector_reports_import_failure_with_line_and_failing_tests(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text('import os\n\nraise RuntimeError("boom")\n\ndef broken():\n    "Doc."\n')
    result = inspect_tool_file(str(broken), "broken")
    assert result["error"] == {"stage": "inspect", "message": "importing the tool failed: RuntimeError: boom", "line": 3}
    assert "broken" not in sys.modules

    tested = tmp_path / "tested.py"
    tested.write_text(textwrap.dedent('''
        DEPENDS_ON = ["src/*.py"]
        NETWORK = False

        def tested(x: int) -> int:
            """Double.

            Args:
                x: number
            """
            return x * 2

        def test_double():
            assert tested(2) == 4

        def test_wrong():
            assert tested(2) == 5, "two doubled"
    '''))
    result = inspect_tool_file(str(tested), "tested")
    assert result["ok"] is False
    assert result["error"]["stage"] == "tests"
    assert result["error"]["line"] == 17
    assert "test_wrong" in result["error"]["message"] and "two doubled" in result["error"]["message"]
    assert [t["ok"] for t in result["tests"]] == [True, False]

    tested.write_text(tested.read_text().replace("== 5", "== 4"))
    result = inspect_tool_file(str(tested), "tested")
    assert result["ok"] is True
    assert result["depends_on"] == ["src/*.py"] and result["network"] is False
    assert [t["name"] for t in result["tests"]] == ["test_double", "test_wrong"]


def test_inspector_times_out_a_hanging_test(tmp_path: Path) -> None:
    path = tmp_path / "slow.py"
    path.write_text('import time\n\ndef slow() -> None:\n    "Doc."\n\ndef test_hangs():\n    time.sleep(30)\n')
    result = inspect_tool_file(str(path), "slow", test_timeout_s=0.3)
    assert result["error"]["stage"] == "tests"
    assert "timed out" in result["error"]["message"]
    assert result["error"]["line"] == 7
