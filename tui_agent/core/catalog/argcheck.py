"""Check a tool call's arguments against the tool's JSON input schema before anything runs (jsonschema, Draft 2020-12;
the messages name the argument and what it takes)."""

from __future__ import annotations

import functools
import json
import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from tui_agent.core.catalog.errors import PipelineError

if TYPE_CHECKING:  # jsonschema (~30 ms of imports) loads with the first call checked, not with every start
    import jsonschema
    from jsonschema import Draft202012Validator

JSON_TYPES = {"string": "a string", "integer": "an integer", "number": "a number", "boolean": "true or false",
              "array": "a list", "object": "an object", "null": "null"}
MAX_INT_BITS = 14_000  # about 4,200 digits: Python refuses to turn longer integers into text (or JSON)
FIRST_REPORTED = {"additionalProperties": 0, "required": 1}  # unknown, then missing, then each value's problem


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


def where(path: Sequence[Any]) -> str:
    """`argument 'tags'[1]` for the path ('tags', 1) into the arguments."""
    first, *rest = path
    return f"argument {first!r}" + "".join(f"[{step!r}]" for step in rest)


def beyond_json(value: Any, path: tuple[Any, ...]) -> Iterator[str]:
    """Values JSON cannot carry, which a schema cannot refuse: infinity, NaN and integers too long to print."""
    if isinstance(value, float) and not math.isfinite(value):
        yield f"{where(path)} must be a finite number, not {value} (JSON has no infinity or NaN)"
    elif isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > MAX_INT_BITS:
        yield f"{where(path)} is too large an integer ({value.bit_length()} bits; at most {MAX_INT_BITS})"
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from beyond_json(item, (*path, key))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from beyond_json(item, (*path, index))


def reason(error: jsonschema.ValidationError) -> str:
    """What the value must be, in words, from the validator's error (its own message for the rarer keywords)."""
    keyword, expected, value = error.validator, error.validator_value, error.instance
    if keyword == "type":
        kinds = [expected] if isinstance(expected, str) else list(expected)
        return f"must be {' or '.join(JSON_TYPES.get(kind, str(kind)) for kind in kinds)}, not {describe(value)}"
    if keyword == "enum":
        return f"must be one of {', '.join(repr(option) for option in expected)}, not {describe(value)}"
    if keyword in ("minimum", "maximum"):
        return f"must be {'at least' if keyword == 'minimum' else 'at most'} {expected}, not {value}"
    if keyword == "maxLength":
        return f"must be at most {expected} characters, not {len(value)}"
    if keyword in ("anyOf", "oneOf") and error.context:
        return "; or ".join(dict.fromkeys(reason(option) for option in error.context))
    return f"is invalid: {error.message}"


def schema_problem(validator: Draft202012Validator, args: dict[str, Any]) -> str | None:
    """The first thing wrong with the arguments as the schema sees them, in the order a person fixes them."""
    order = list(args)
    errors = sorted(validator.iter_errors(args), key=lambda error: (
        FIRST_REPORTED.get(str(error.validator), 2) if not error.path else 2,
        order.index(error.path[0]) if error.path else -1))
    if not errors:
        return None
    first = errors[0]
    if first.validator == "additionalProperties" and not first.path:
        properties = validator.schema.get("properties", {})
        unknown = sorted(set(args) - set(properties))
        return f"has no argument(s) {', '.join(unknown)}; it takes: {', '.join(properties) or 'none'}"
    if first.validator == "required" and not first.path:
        missing = [key for key in validator.schema.get("required", []) if key not in args]
        return f"is missing required argument(s) {', '.join(missing)}"
    return f": {where(first.path)} {reason(first)}" if first.path else f": the arguments {reason(first)}"


def with_integers(validator: Draft202012Validator, schema: Any, value: Any) -> Any:
    """The value with integral floats as ints where the schema takes an integer (the model may send 3.0)."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, float) and value.is_integer() and "integer" in _kinds(schema):
        return int(value)
    for option in schema.get("anyOf", []):
        if validator.evolve(schema=option).is_valid(value):
            return with_integers(validator, option, value)
    if isinstance(value, list):
        return [with_integers(validator, schema.get("items"), item) for item in value]
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        return {key: with_integers(validator, properties.get(key, schema.get("additionalProperties")), item)
                for key, item in value.items()}
    return value


def _kinds(schema: dict[str, Any]) -> list[Any]:
    kinds = schema.get("type", [])
    return [kinds] if isinstance(kinds, str) else list(kinds) if isinstance(kinds, list) else []


def check_arguments(name: str, input_schema: dict[str, Any], args: Any) -> dict[str, Any]:
    """The arguments checked against the schema (an object, no unknown argument, every required one, each value's
    type and range); raises PipelineError(stage="arguments") naming the tool, the argument and what it takes."""
    if not isinstance(args, dict):
        raise PipelineError("arguments", f"{name} takes an object of named arguments, not {describe(args)}")
    for unjsonable in beyond_json(args, ()):
        raise PipelineError("arguments", f"{name}: {unjsonable}")
    import jsonschema
    from referencing.exceptions import Unresolvable

    validator = _validator_for(input_schema)
    try:
        if isinstance(validator, str):
            raise jsonschema.SchemaError(validator)
        problem = schema_problem(validator, args)
    except (jsonschema.SchemaError, Unresolvable, RecursionError) as broken:
        detail = getattr(broken, "message", None) or type(broken).__name__
        raise PipelineError("arguments", f"{name}'s input schema is not a usable JSON schema: {detail}") from None
    if problem is not None:
        raise PipelineError("arguments", f"{name}{'' if problem.startswith(':') else ' '}{problem}")
    return dict(with_integers(validator, validator.schema, args))


def _validator_for(input_schema: dict[str, Any]) -> Draft202012Validator | str:
    """The schema's validator, or what makes the schema unusable; checked against the meta-schema once per distinct
    schema (0.5–1.5 ms each time, three times per catalog call of a reply: batch plan, catalog, call)."""
    try:
        text = json.dumps(input_schema, allow_nan=False)  # key order kept: messages list the properties in it
    except (TypeError, ValueError, RecursionError):  # not JSON: never cached, checked (and refused) each time
        return _checked_validator(input_schema)
    return _cached_validator(text)


@functools.lru_cache(maxsize=512)
def _cached_validator(schema_text: str) -> Draft202012Validator | str:
    return _checked_validator(json.loads(schema_text))


def _checked_validator(input_schema: dict[str, Any]) -> Draft202012Validator | str:
    import jsonschema
    from jsonschema import Draft202012Validator
    from referencing.exceptions import Unresolvable

    schema = {**input_schema, "additionalProperties": False}  # a tool function takes no argument it does not name
    try:
        Draft202012Validator.check_schema(schema)
    except (jsonschema.SchemaError, Unresolvable, RecursionError) as broken:
        return getattr(broken, "message", None) or type(broken).__name__
    return Draft202012Validator(schema)
