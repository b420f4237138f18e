"""Output schemas from a tool's return annotation, read from its syntax tree (the file is never imported)."""

from __future__ import annotations

import pytest

from tui_agent.core.mcp.definitions import output_schema, structured_content, title_of


def returns(annotation: str) -> dict | None:
    schema = output_schema(f"import typing\n\ndef t(x: int) -> {annotation}:\n    return x\n", "t")
    return None if schema is None else schema["properties"]["result"]


@pytest.mark.parametrize("annotation, expected", [
    ("int", {"type": "integer"}),
    ("str", {"type": "string"}),
    ("list[str]", {"type": "array", "items": {"type": "string"}}),
    ("dict[str, float]", {"type": "object", "additionalProperties": {"type": "number"}}),
    ("int | None", {"anyOf": [{"type": "integer"}, {"type": "null"}]}),
    ("typing.Optional[int]", None),  # only bare names are read: `typing.` could be anything
    ("Optional[bool]", {"anyOf": [{"type": "boolean"}, {"type": "null"}]}),
    ("'list[int]'", {"type": "array", "items": {"type": "integer"}}),
    ("None", {"type": "null"}),
    ("int | str", None),
    ("dict[int, str]", None),
    ("MyClass", None),
    ("typing.Any", None),
])
def test_annotations_json_describes_and_those_it_does_not(annotation: str, expected: dict | None) -> None:
    assert returns(annotation) == expected


def test_no_annotation_broken_source_or_another_function_give_no_schema() -> None:
    assert output_schema("def t(x):\n    return x\n", "t") is None
    assert output_schema("def t(x) -> int:\n    return (\n", "t") is None
    assert output_schema("def other() -> int:\n    return 1\n", "t") is None
    deep = "list[" * 500 + "int" + "]" * 500
    assert output_schema(f"def t() -> {deep}:\n    return []\n", "t") is None  # too deep: no schema, no crash


def test_structured_content_only_for_a_value_that_matches() -> None:
    schema = output_schema("def t() -> list[int]:\n    return []\n", "t")
    assert schema is not None
    assert structured_content([1, 2], schema) == {"result": [1, 2]}
    assert structured_content(["a"], schema) is None and structured_content(True, schema) is None


def test_titles() -> None:
    assert title_of("write_note") == "Write note" and title_of("x") == "X"
