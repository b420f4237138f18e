"""Check a tool call's arguments against the tool's JSON input schema before anything runs (precise, per-argument messages)."""

from __future__ import annotations

import math
from typing import Any

from tui_agent.core.catalog.errors import PipelineError

JSON_TYPES = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
              "array": "a list", "object": "an object", "null": "null"}


def describe(value: Any) -> str:
    """A value as the message shows it: its JSON type and a short rendering."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return f"the boolean {str(value).lower()}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"the non-finite number {value}"
    if isinstance(value, (int, float)):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f"the string {shown!r}"
    if isinstance(value, (list, tuple)):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def matches_type(kind: str, value: Any) -> bool:
    if kind == "null":
        return value is None
    if kind == "boolean":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if kind == "integer":
        return isinstance(value, int) or (isinstance(value, float) and math.isfinite(value) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float))
    containers: dict[str, type | tuple[type, ...]] = {"string": str, "array": (list, tuple), "object": dict}
    return kind in containers and isinstance(value, containers[kind])


def same(value: Any, option: Any) -> bool:
    """Equality as JSON sees it: true is not 1."""
    if isinstance(value, bool) or isinstance(option, bool):
        return isinstance(value, bool) and isinstance(option, bool) and value == option
    return bool(value == option)


def check_value(schema: dict[str, Any], value: Any, where: str) -> Any:
    """The value (integral floats for integers become ints); raises ValueError with `where` in the message."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"{where} must be a finite number, not {value} (JSON has no infinity or NaN)")
    if "anyOf" in schema:
        return check_any_of(schema["anyOf"], value, where)
    kinds = schema.get("type")
    if kinds is not None:
        kinds = [kinds] if isinstance(kinds, str) else list(kinds)
        matched = [kind for kind in kinds if matches_type(kind, value)]
        if not matched:
            wanted = " or ".join(JSON_TYPES.get(kind, kind) for kind in kinds)
            raise ValueError(f"{where} must be {wanted}, not {describe(value)}")
        if matched[0] == "integer" and isinstance(value, float):
            value = int(value)
    if "enum" in schema and not any(same(value, option) for option in schema["enum"]):
        options = ", ".join(repr(option) for option in schema["enum"])
        raise ValueError(f"{where} must be one of {options}, not {describe(value)}")
    check_range(schema, value, where)
    if isinstance(value, (list, tuple)) and isinstance(schema.get("items"), dict):
        value = [check_value(schema["items"], item, f"{where}[{index}]") for index, item in enumerate(value)]
    if isinstance(value, dict) and isinstance(schema.get("additionalProperties"), dict):
        value = {key: check_value(schema["additionalProperties"], item, f"{where}[{key!r}]") for key, item in value.items()}
    return value


def check_any_of(options: list[dict[str, Any]], value: Any, where: str) -> Any:
    problems = []
    for option in options:
        try:
            return check_value(option, value, where)
        except ValueError as problem:
            problems.append(str(problem).removeprefix(f"{where} "))
    raise ValueError(f"{where} " + "; or ".join(problems))


MAX_INT_BITS = 14_000  # about 4,200 digits: Python refuses to turn longer integers into text (or JSON)


def check_range(schema: dict[str, Any], value: Any, where: str) -> None:
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        raise ValueError(f"{where} is too large an integer ({value.bit_length()} bits; at most {MAX_INT_BITS})")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise ValueError(f"{where} must be at least {schema['minimum']}, not {value}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ValueError(f"{where} must be at most {schema['maximum']}, not {value}")
    if isinstance(value, str) and "maxLength" in schema and len(value) > schema["maxLength"]:
        raise ValueError(f"{where} must be at most {schema['maxLength']} characters, not {len(value)}")


def check_arguments(name: str, input_schema: dict[str, Any], args: Any) -> dict[str, Any]:
    """The arguments checked against the schema (object, no unknown, every required, each value's type and range);
    raises PipelineError(stage="arguments") naming the tool, the argument and what it takes."""
    if not isinstance(args, dict):
        raise PipelineError("arguments", f"{name} takes an object of named arguments, not {describe(args)}")
    properties: dict[str, Any] = input_schema.get("properties", {})
    unknown = sorted(set(args) - set(properties))
    if unknown:
        raise PipelineError("arguments", f"{name} has no argument(s) {', '.join(unknown)}; "
                                         f"it takes: {', '.join(properties) or 'none'}")
    missing = [key for key in input_schema.get("required", []) if key not in args]
    if missing:
        raise PipelineError("arguments", f"{name} is missing required argument(s) {', '.join(missing)}")
    checked: dict[str, Any] = {}
    for key, value in args.items():
        try:
            checked[key] = check_value(properties[key], value, f"argument {key!r}")
        except ValueError as problem:
            raise PipelineError("arguments", f"{name}: {problem}") from None
    return checked
