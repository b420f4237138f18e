"""A tool's JSON input schema as form fields, and the typed arguments parsed back from what was typed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tui_agent.core.errors import TuiAgentError


@dataclass(frozen=True)
class FormField:
    """One argument of a tool as the run form shows it."""

    name: str
    type: str
    required: bool
    description: str = ""
    default: Any = None
    choices: tuple[Any, ...] = ()

    @property
    def placeholder(self) -> str:
        if self.type in ("array", "object"):
            return f"JSON {self.type}"
        if self.default is not None:
            return f"default: {self.default!r}"
        return self.type + ("" if self.required else " (optional)")


class ArgumentError(TuiAgentError, ValueError):
    """A typed value does not fit its field; the message names the field."""


def _field_type(spec: dict[str, Any]) -> str:
    kind = spec.get("type")
    if isinstance(kind, list):
        kind = next((item for item in kind if item != "null"), "string")
    if kind is None and ("anyOf" in spec or "oneOf" in spec):
        options = [option for option in spec.get("anyOf", spec.get("oneOf", [])) if option.get("type") != "null"]
        kind = options[0].get("type", "string") if options else "string"
    return str(kind or "string")


def fields_from_schema(schema: dict[str, Any] | None) -> list[FormField]:
    """Fields in the schema's property order; required ones flagged."""
    if not schema:
        return []
    required = set(schema.get("required", []))
    fields: list[FormField] = []
    for name, spec in (schema.get("properties") or {}).items():
        spec = spec or {}
        fields.append(
            FormField(
                name=name,
                type=_field_type(spec),
                required=name in required,
                description=str(spec.get("description", "")),
                default=spec.get("default"),
                choices=tuple(spec.get("enum", ())),
            )
        )
    return fields


def parse_value(field: FormField, raw: str | bool) -> Any:
    """The typed value of one field from the text (or checkbox state) the person entered."""
    if field.type == "boolean":
        if isinstance(raw, bool):
            return raw
        lowered = raw.strip().lower()
        if lowered in ("true", "yes", "1", "y"):
            return True
        if lowered in ("false", "no", "0", "n"):
            return False
        raise ArgumentError(f"{field.name}: expected true or false")
    text = str(raw)
    try:
        if field.type == "integer":
            return int(text.strip())
        if field.type == "number":
            return float(text.strip())
        if field.type in ("array", "object"):
            value = json.loads(text)
            expected = list if field.type == "array" else dict
            if not isinstance(value, expected):
                raise ArgumentError(f"{field.name}: expected a JSON {field.type}")
            return value
    except (ValueError, json.JSONDecodeError) as exc:
        if isinstance(exc, ArgumentError):
            raise
        raise ArgumentError(f"{field.name}: expected {field.type}, got {text!r}") from exc
    if field.choices and text not in [str(choice) for choice in field.choices]:
        raise ArgumentError(f"{field.name}: must be one of {', '.join(map(str, field.choices))}")
    return text


def collect_arguments(fields: list[FormField], raw_values: dict[str, str | bool]) -> dict[str, Any]:
    """Arguments for `call_tool`: blank optional fields are left out; a blank required field is an error."""
    arguments: dict[str, Any] = {}
    for field in fields:
        raw = raw_values.get(field.name, "")
        if isinstance(raw, str) and raw.strip() == "" and not (field.type == "string" and raw != ""):
            if field.required:
                raise ArgumentError(f"{field.name}: required")
            continue
        arguments[field.name] = parse_value(field, raw)
    return arguments
