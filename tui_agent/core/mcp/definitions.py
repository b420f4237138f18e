"""Catalog tools as MCP tool definitions: title, closed input schema, hints from WRITES/NETWORK, output schema."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import jsonschema
import mcp_types as types

from tui_agent.core.catalog.models import ToolSpec
from tui_agent.core.content import JsonObject, JsonSchema

SCALARS = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}
WRAP_MARKER = "x-fastmcp-wrap-result"
"""Says the value is under `result` (the convention FastMCP clients unwrap into `result.data`)."""


def title_of(name: str) -> str:
    """`write_note` → `Write note`."""
    words = name.replace("_", " ").strip()
    return words[:1].upper() + words[1:]


def tool_definition(spec: ToolSpec, output_schema: JsonSchema | None) -> types.Tool:
    """The MCP definition: extra arguments are refused, so the input schema says so; hints follow the declarations."""
    title = title_of(spec.name)
    input_schema = {**spec.input_schema, "additionalProperties": False}
    annotations = types.ToolAnnotations(title=title, read_only_hint=not spec.writes, destructive_hint=spec.writes,
                                        open_world_hint=bool(spec.network))
    return types.Tool(name=spec.name, title=title, description=spec.description, input_schema=input_schema,
                      output_schema=output_schema, annotations=annotations)


def output_schema(source: str, name: str) -> JsonSchema | None:
    """`{"result": <schema of the return annotation>}` when the tool's return type is one JSON describes, else None.

    Read from the source's syntax tree (the tool file is agent-written: it is never imported here)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name and node.returns is not None:
            try:
                schema = annotation_schema(node.returns)
            except RecursionError:
                return None
            if schema is None:
                return None
            return {"type": "object", "properties": {"result": schema}, "required": ["result"], WRAP_MARKER: True}
    return None


def annotation_schema(node: ast.expr) -> JsonSchema | None:
    """The JSON schema of an annotation written with builtins (str, int, float, bool, None, list[...],
    dict[str, ...], X | None, Optional[X]); None for anything else (a class, Any, a union of several types)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):  # a string annotation
        try:
            return annotation_schema(ast.parse(node.value, mode="eval").body)
        except SyntaxError:
            return None
    if isinstance(node, ast.Constant) and node.value is None:
        return {"type": "null"}
    if isinstance(node, ast.Name):
        if node.id in SCALARS:
            return {"type": SCALARS[node.id]}
        return {"type": "array"} if node.id == "list" else {"type": "object"} if node.id == "dict" else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _optional(node.left, node.right)
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return _subscript(node.value.id, node.slice)
    return None


def _subscript(base: str, inner: ast.expr) -> JsonSchema | None:
    if base in ("list", "List"):
        items = annotation_schema(inner)
        return None if items is None else {"type": "array", "items": items}
    if base in ("dict", "Dict") and isinstance(inner, ast.Tuple) and len(inner.elts) == 2:
        key, value = inner.elts
        values = annotation_schema(value)
        if not (isinstance(key, ast.Name) and key.id == "str") or values is None:
            return None
        return {"type": "object", "additionalProperties": values}
    if base == "Optional":
        return _optional(inner, ast.Constant(value=None))
    return None


def _optional(left: ast.expr, right: ast.expr) -> JsonSchema | None:
    schemas = [annotation_schema(left), annotation_schema(right)]
    if None in schemas or {"type": "null"} not in schemas:
        return None  # only `X | None`: a union of several types is not described
    inner = next((s for s in schemas if s != {"type": "null"}), None)
    if inner is None:
        return None
    return {"anyOf": [inner, {"type": "null"}]}


def structured_content(value: Any, schema: JsonSchema) -> JsonObject | None:
    """`{"result": value}` when it matches the output schema, else None (the tool broke its own annotation)."""
    content = {"result": value}
    try:
        jsonschema.validate(content, schema)
    except (jsonschema.ValidationError, jsonschema.SchemaError, RecursionError):  # the value is the tool's: hostile
        return None
    return content


class OutputSchemas:
    """Output schemas by tool version (the source sha), read once from each version's runnable copy."""

    def __init__(self) -> None:
        self._by_sha: dict[str, JsonSchema | None] = {}

    def get(self, spec: ToolSpec, runnable: Path | None) -> JsonSchema | None:
        if spec.source_sha not in self._by_sha:
            try:
                source = runnable.read_text(encoding="utf-8") if runnable is not None else ""
            except (OSError, UnicodeDecodeError):
                return None  # not cached: the copy may be recovered later
            self._by_sha[spec.source_sha] = output_schema(source, spec.name)
        return self._by_sha[spec.source_sha]
