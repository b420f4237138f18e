"""Stdlib-only: build a tool's JSON input schema from its signature and Google-style docstring."""

from __future__ import annotations

import inspect
import json
import re
import types
import typing
from typing import Any, Callable, Literal, Union

from tui_agent.core.errors import TuiAgentError

SCALARS: dict[Any, str] = {str: "string", int: "integer", float: "number", bool: "boolean"}
SECTION_HEADERS = ("args:", "arguments:", "parameters:", "params:", "returns:", "return:", "raises:", "yields:",
                   "examples:", "example:", "notes:", "note:", "see also:")
ARG_LINE = re.compile(r"^\*{0,2}(?P<name>[A-Za-z_][A-Za-z0-9_]*)\s*(\([^)]*\))?\s*:\s*(?P<text>.*)$")


class SchemaError(TuiAgentError):
    """The signature cannot be turned into a JSON schema; `param` names the parameter at fault."""

    def __init__(self, message: str, param: str | None = None) -> None:
        super().__init__(message)
        self.param = param


def annotation_schema(annotation: Any, where: str) -> dict[str, Any]:
    """The JSON schema of one type annotation; raises SchemaError for anything outside the supported set."""
    if annotation in SCALARS:
        return {"type": SCALARS[annotation]}
    if annotation is list:
        return {"type": "array"}
    if annotation is dict:
        return {"type": "object"}
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is list:
        if len(args) != 1:
            raise SchemaError(f"{where}: list[...] needs exactly one item type")
        return {"type": "array", "items": annotation_schema(args[0], where)}
    if origin is dict:
        if len(args) != 2 or args[0] is not str:
            raise SchemaError(f"{where}: only dict[str, ...] is supported (JSON object keys are strings)")
        return {"type": "object", "additionalProperties": annotation_schema(args[1], where)}
    if origin is Literal:
        values = list(args)
        if not values or not all(isinstance(v, (str, int, float, bool)) and v is not None for v in values):
            raise SchemaError(f"{where}: Literal[...] values must be str, int, float or bool")
        kinds = {SCALARS[type(v)] for v in values}
        schema: dict[str, Any] = {"enum": values}
        if len(kinds) == 1:
            schema = {"type": kinds.pop(), "enum": values}
        return schema
    if origin is Union or origin is types.UnionType:
        members = [a for a in args if a is not type(None)]
        if len(members) == len(args):
            raise SchemaError(f"{where}: unions other than X | None are not supported")
        if len(members) != 1:
            raise SchemaError(f"{where}: only X | None is supported, not a union of several types")
        inner = annotation_schema(members[0], where)
        if set(inner) == {"type"} and isinstance(inner["type"], str):
            return {"type": [inner["type"], "null"]}
        return {"anyOf": [inner, {"type": "null"}]}
    shown = getattr(annotation, "__name__", None) or repr(annotation)
    raise SchemaError(
        f"{where}: unsupported annotation {shown} "
        "(use str, int, float, bool, list[...], dict[str, ...], X | None or Literal[...])"
    )


def split_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The summary paragraph and the per-argument descriptions from a Google-style `Args:` section."""
    lines = inspect.cleandoc(doc).splitlines()
    summary: list[str] = []
    for line in lines:
        if not line.strip() or line.strip().lower() in SECTION_HEADERS:
            break
        summary.append(line.strip())
    described: dict[str, str] = {}
    in_args = False
    arg_indent: int | None = None
    current: str | None = None
    for line in lines:
        stripped = line.strip()
        lowered = stripped.lower()
        indent = len(line) - len(line.lstrip())
        if lowered in SECTION_HEADERS:
            in_args = lowered in ("args:", "arguments:", "parameters:", "params:")
            arg_indent, current = None, None
            continue
        if not in_args:
            continue
        if not stripped:
            continue
        if indent == 0:
            in_args = False
            continue
        match = ARG_LINE.match(stripped)
        if match and (arg_indent is None or indent <= arg_indent):
            arg_indent = indent
            current = match.group("name")
            described[current] = match.group("text").strip()
        elif current is not None:
            described[current] = (described[current] + " " + stripped).strip()
    return " ".join(summary), described


def build_schema(function: Callable[..., Any], name: str | None = None) -> dict[str, Any]:
    """{"name", "description", "input_schema"} for a tool function; raises SchemaError naming the parameter."""
    tool_name = name or function.__name__
    doc = inspect.getdoc(function)
    if not doc:
        raise SchemaError(f"{tool_name}() has no docstring")
    summary, arg_docs = split_docstring(doc)
    if not summary:
        raise SchemaError(f"{tool_name}() docstring has no summary line")
    try:
        hints = typing.get_type_hints(function)
    except Exception as exc:  # an annotation that does not resolve (NameError, TypeError, ...)
        raise SchemaError(f"{tool_name}(): an annotation cannot be resolved: {type(exc).__name__}: {exc}") from exc
    properties: dict[str, Any] = {}
    required: list[str] = []
    for param in inspect.signature(function).parameters.values():
        where = f"parameter {param.name!r}"
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise SchemaError(f"{where}: *args and **kwargs are not supported; name every argument", param.name)
        if param.kind is param.POSITIONAL_ONLY:
            raise SchemaError(f"{where}: positional-only parameters are not supported (tools are called by keyword)", param.name)
        if param.name not in hints:
            raise SchemaError(f"{where} has no type annotation", param.name)
        try:
            prop = annotation_schema(hints[param.name], where)
        except SchemaError as exc:
            raise SchemaError(str(exc), param.name) from exc
        if param.name in arg_docs and arg_docs[param.name]:
            prop["description"] = arg_docs[param.name]
        if param.default is param.empty:
            required.append(param.name)
        else:
            try:
                json.dumps(param.default)
            except (TypeError, ValueError) as exc:
                raise SchemaError(f"{where}: default {param.default!r} is not JSON-serialisable", param.name) from exc
            prop["default"] = param.default
        properties[param.name] = prop
    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    return {"name": tool_name, "description": summary, "input_schema": input_schema}
