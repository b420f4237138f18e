"""Every `.agent/config.toml` setting as one pydantic model (type, range, default, doc), reading and validating the file."""

from __future__ import annotations

import difflib
import json
import math
import re
import tomllib
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Literal, cast

from pydantic import AfterValidator, AliasPath, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError
from pydantic.fields import FieldInfo
from pydantic_core import ErrorDetails

from tui_agent.core.hostnames import check_names
from tui_agent.core import projectfs
from tui_agent.core.config_error import CONFIG_NAME, ConfigError

def setting(key: str, default: Any, doc: str, **limits: Any) -> Any:
    """A Settings field read from `key` (dotted: `catalog.top_k` is `top_k` in `[catalog]`), documented by `doc`."""
    return Field(default, validation_alias=AliasPath(*key.split(".")), description=doc, **limits)


def _list_as_tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _host_names(value: tuple[str, ...]) -> tuple[str, ...]:
    check_names(list(value), "sandbox.network")
    return value


Strings = Annotated[tuple[str, ...], BeforeValidator(_list_as_tuple)]
"""A TOML list of strings, kept as a tuple."""


# To add a setting: one field here, `setting("section.key", default, doc, ge=…, le=…)`; its type (Literal for
# choices) and limits validate it. The README table is regenerated with `tuiagent config --markdown`
# (tests/test_settings.py fails until it is).
class Settings(BaseModel):
    """Every `.agent/config.toml` setting, validated and documented; `extra` holds the unknown top-level tables (such
    as `[mcp]`) and `warnings` one line per ignored (misspelled or unknown) key."""

    model_config = ConfigDict(frozen=True, strict=True, validate_by_name=True, validate_by_alias=True)

    model: str | None = setting("model", None, "model id sent to the Messages API (default: a current Sonnet)")
    permission_mode: Literal["ask", "auto", "read-only", "plan"] = setting(
        "permissions.mode", "ask", "ask before shell commands, writes and network; auto accepts edits; read-only refuses "
        "them; plan is read-only until a proposed plan is approved")
    sandbox_min_level: Literal["rlimits", "bubblewrap"] | None = setting(
        "sandbox.min_level", None, "refuse to run agent code below this isolation tier")
    protected_globs: Strings = setting("sandbox.protected", (), "extra globs agent code may never write, on top of "
                                       ".git, .agent/, hooks, editor and shell config")
    allow_rules: Strings = setting("permissions.allow", (), "allow rules: calls they cover are not asked about, e.g. "
                                   "`run_shell(pytest:*)` (prefix), `run_shell(make test)` (exact), `write_file` (the tool)")
    sandbox_env: Strings = setting("sandbox.env", (), "names of extra environment variables run_shell and agent code "
                                   "see (secret-looking names, `*_TOKEN`, `*_KEY`, `*_SECRET`, passwords, are never passed)")
    sandbox_paths: Strings = setting("sandbox.paths", (), "extra folders (absolute or `~/…`) agent code sees "
                                     "read-only; the home itself, secrets, /tmp and other users' homes are refused")
    sandbox_network: Annotated[Strings, AfterValidator(_host_names)] = setting(
        "sandbox.network", (), "host names (`*.example.com` covers names below it) a run_shell command or run_python "
        "snippet granted the network may reach, through the sandbox's proxy; empty: any public name (never this "
        "machine or its LAN)")
    catalog_token_budget: int = setting("catalog.token_budget", 2000, "tokens of catalog index carried in every "
                                        "system prompt", ge=0, le=1_000_000)
    catalog_top_k: int = setting("catalog.top_k", 40, "tools sent with a full schema; search_tools / call_tool reach "
                                 "the rest", ge=0, le=10_000)
    max_turns: int = setting("agent.max_turns", 50, "model requests allowed for one prompt before the turn stops",
                             ge=1, le=100_000)
    thinking: str | None = setting("agent.thinking", None, "extended thinking: \"adaptive\", \"off\" or a budget in "
                                   "tokens (\"16000\"); default adaptive for Claude models that have it, off for others "
                                   "(--thinking)")
    effort: Literal["low", "medium", "high", "xhigh", "max"] | None = setting(
        "agent.effort", None, "how much effort the model puts into a reply (output_config.effort; --effort); "
        "default: the model's own")
    web_search: bool = setting("web.search", False, "offer the API's server-side web search tool to models that have "
                               "it (searches run at Anthropic and are billed per search)")
    web_search_max_uses: int = setting("web.search_max_uses", 5, "web searches the model may run in one request",
                                       ge=1, le=50)
    ui_notify_after_s: int = setting("ui.notify_after_s", 30, "when a turn that ran at least this many seconds ends, "
                                     "ring the terminal bell (and send a desktop notification where the terminal has "
                                     "them); 0 turns it off", ge=0, le=86400)
    extra: dict[str, Any] = Field(default_factory=dict)
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class Setting:
    """One setting as the README table, `tuiagent config` and the error messages show it, read off its Settings field."""

    key: str
    field_name: str
    kind: type
    default: Any
    doc: str
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None

    @property
    def section(self) -> str:
        return self.key.rpartition(".")[0]

    @property
    def name(self) -> str:
        return self.key.rpartition(".")[2]


def _described(field_name: str, info: FieldInfo) -> Setting:
    kinds = [kind for kind in typing.get_args(info.annotation) or (info.annotation,) if kind is not type(None)]
    kind = kinds[0] if len(kinds) == 1 else info.annotation
    choices = typing.get_args(kind) if typing.get_origin(kind) is Literal else ()
    value_kind = cast(type, type(choices[0]) if choices else list if typing.get_origin(kind) is tuple else kind)
    limits = {type(limit).__name__: limit for limit in info.metadata}
    alias = cast(AliasPath, info.validation_alias)
    return Setting(".".join(str(part) for part in alias.path), field_name, value_kind, info.default,
                   info.description or "", choices, getattr(limits.get("Ge"), "ge", None), getattr(limits.get("Le"), "le", None))


SETTINGS: tuple[Setting, ...] = tuple(_described(name, info) for name, info in Settings.model_fields.items()
                                      if isinstance(info.validation_alias, AliasPath))
BY_KEY: dict[str, Setting] = {setting.key: setting for setting in SETTINGS}
SECTIONS: frozenset[str] = frozenset(setting.section for setting in SETTINGS if setting.section)


def default(key: str) -> Any:
    return BY_KEY[key].default


TYPE_NAMES = {str: "a string", int: "an integer", float: "a number", bool: "true or false", list: "a list of strings",
              dict: "a table"}


def describe_value(value: Any) -> str:
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, float) and not math.isfinite(value):
        return "an infinite or NaN number"
    kind = {bool: "boolean", str: "string", int: "integer", float: "number"}.get(type(value), type(value).__name__)
    return f"the {kind} {shown(value)}"


def example(setting: Setting) -> str:
    value = setting.choices[0] if setting.choices else setting.default
    if value is None:
        value = {str: "…", int: 1, float: 1.0, bool: True, list: [], dict: {}}[setting.kind]
    return f"{setting.name} = {toml_literal(value)}"


def toml_literal(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, str):  # a JSON string is a TOML basic string: every control character escaped
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(toml_literal(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{key} = {toml_literal(item)}" for key, item in value.items()) + "}"
    return repr(value)


def shown(value: Any) -> str:
    """A value as an error message quotes it: TOML, one line, at most about 60 characters."""
    text = toml_literal(value)
    return text if len(text) <= 60 else text[:57] + "..."


def number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def problem_text(setting: Setting, value: Any, error: ErrorDetails) -> str:
    """What pydantic found wrong with `value` for `setting`, said with the setting's name and how to fix it."""
    fix = f"write e.g. {example(setting)}"
    if error["type"] == "literal_error":
        allowed = ", ".join(toml_literal(choice) for choice in setting.choices)
        return f"{setting.key} = {shown(value)} is not allowed; use one of {allowed}"
    if error["type"] == "greater_than_equal":
        return f"{setting.key} = {value} is below the minimum {number(error.get('ctx', {})['ge'])}; {fix}"
    if error["type"] == "less_than_equal":
        return f"{setting.key} = {value} is above the maximum {number(error.get('ctx', {})['le'])}; {fix}"
    if error["type"] == "value_error":
        return f"{error.get('ctx', {})['error']}; {fix}"
    inside = error["loc"][len(setting.key.split(".")):]  # an item of a list
    if inside and isinstance(inside[0], int):
        return f"{setting.key} must be {TYPE_NAMES[setting.kind]}; item {inside[0] + 1} is {describe_value(error['input'])}; {fix}"
    return f"{setting.key} must be {TYPE_NAMES[setting.kind]}, not {describe_value(value)}; {fix}"


class KeyLines:
    """Finds the line of a key or a `[section]` header in the config text (tomllib does not report positions)."""

    HEADER = re.compile(r"^\s*\[\s*([A-Za-z0-9_.\"' -]+?)\s*\]")
    ASSIGN = re.compile(r"^\s*([A-Za-z0-9_.\"' -]+?)\s*=")

    def __init__(self, text: str) -> None:
        self.places: dict[str, int] = {}
        section = ""
        for number, line in enumerate(text.splitlines(), start=1):
            header = self.HEADER.match(line)
            if header and not line.lstrip().startswith("[["):
                section = self.clean(header.group(1))
                self.places.setdefault(section, number)
                continue
            assign = self.ASSIGN.match(line)
            if assign:
                key = self.clean(assign.group(1))
                self.places.setdefault(f"{section}.{key}" if section else key, number)

    @staticmethod
    def clean(dotted: str) -> str:
        return ".".join(part.strip().strip("\"'") for part in dotted.split("."))

    def line(self, key: str) -> int | None:
        while key:
            if key in self.places:
                return self.places[key]
            key = key.rpartition(".")[0]
        return None


def closest_key(key: str) -> str | None:
    candidates = [setting.key for setting in SETTINGS] + sorted(SECTIONS)
    names = {candidate.rpartition(".")[2]: candidate for candidate in candidates}
    match = difflib.get_close_matches(key, candidates, n=1, cutoff=0.6)
    if not match:
        short = difflib.get_close_matches(key.rpartition(".")[2], list(names), n=1, cutoff=0.75)
        match = [names[short[0]]] if short else []
    return match[0] if match else None


def unknown_key_warning(key: str, lines: KeyLines, path: str) -> str:
    where = f"{path}:{lines.line(key)}" if lines.line(key) else path
    guess = closest_key(key)
    hint = f"did you mean {guess!r}?" if guess else "see the Configuration section of the README"
    return f"{where}: unknown setting {key!r} is ignored; {hint}"


def toml_error(exc: tomllib.TOMLDecodeError, path: str, last_line: int) -> ConfigError:
    text = str(exc)
    match = re.search(r"\(at line (\d+), column (\d+)\)", text)
    if match is None:
        what = text.replace("(at end of document)", "").strip()
        return ConfigError(f"invalid TOML at the end of the file: {what}; fix the syntax (see toml.io)",
                           path=path, line=last_line)
    what = text[: match.start()].strip()
    return ConfigError(f"invalid TOML at column {match.group(2)}: {what}; fix the syntax (see toml.io)",
                       path=path, line=int(match.group(1)))


def settings_from_text(text: str, path: str = CONFIG_NAME) -> Settings:
    """Parse and validate config text; raises ConfigError (one line) on the first invalid value."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise toml_error(exc, path, max(1, len(text.splitlines()))) from None
    except ValueError as exc:  # tomllib's int(): a number longer than Python converts (4300 digits)
        line = next((number for number, content in enumerate(text.splitlines(), 1) if re.search(r"\d{1000}", content)), None)
        raise ConfigError(f"a number is too long ({exc}); write a shorter one", path=path, line=line) from None
    except (RecursionError, MemoryError) as exc:
        raise ConfigError(f"invalid TOML: nested too deeply to read ({type(exc).__name__})", path=path) from None
    return settings_from_mapping(data, KeyLines(text), path)


def settings_from_mapping(data: dict[str, Any], lines: KeyLines | None = None, path: str = CONFIG_NAME) -> Settings:
    """Validate parsed TOML with the Settings model: a wrong type or range raises ConfigError (the first in the file),
    unknown keys become warnings."""
    lines = lines or KeyLines("")
    known: dict[str, Any] = {}  # the known settings, nested as in the file
    order: list[str] = []
    warnings: list[str] = []
    extra: dict[str, Any] = {}
    for key, value in data.items():
        if key in SECTIONS:
            if not isinstance(value, dict):
                raise ConfigError(f"[{key}] must be a table, not {describe_value(value)}; write a [{key}] header "
                                  f"with its settings below it", path=path, line=lines.line(key))
            for name, inner in value.items():
                if f"{key}.{name}" in BY_KEY:
                    known.setdefault(key, {})[name] = inner
                    order.append(f"{key}.{name}")
                else:
                    warnings.append(unknown_key_warning(f"{key}.{name}", lines, path))
        elif key in BY_KEY:
            known[key] = value
            order.append(key)
        else:
            extra[key] = value
            warnings.append(unknown_key_warning(key, lines, path))
    try:
        settings = Settings.model_validate(known)
    except ValidationError as invalid:
        raise first_problem(invalid, order, known, lines, path) from None
    return settings.model_copy(update={"extra": extra, "warnings": tuple(warnings)})


def first_problem(invalid: ValidationError, order: list[str], known: dict[str, Any], lines: KeyLines,
                  path: str) -> ConfigError:
    """The ConfigError of the invalid setting that comes first in the file."""
    found: dict[str, ErrorDetails] = {}
    for error in invalid.errors():
        parts = [str(part) for part in error["loc"]]
        key = next(".".join(parts[:end]) for end in range(len(parts), 0, -1) if ".".join(parts[:end]) in BY_KEY)
        found.setdefault(key, error)
    key = min(found, key=order.index)
    value = known[key] if key in known else known[BY_KEY[key].section][BY_KEY[key].name]
    return ConfigError(problem_text(BY_KEY[key], value, found[key]), path=path, line=lines.line(key))


def load_settings(config_path: Path, shown_as: str = CONFIG_NAME) -> Settings:
    """Read and validate a config file; a missing file gives the defaults, an unreadable or invalid one a ConfigError."""
    try:
        data = projectfs.read_bytes(config_path)  # a link in .agent/ is refused, never read through
    except FileNotFoundError:
        return Settings()
    except projectfs.LinkRefused as refused:  # never read through: the defaults apply, and it is said
        return Settings(warnings=(f"{refused}; the default settings apply",))
    except OSError as exc:
        raise ConfigError(f"cannot read the file: {exc.strerror}; check its permissions", path=shown_as) from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise ConfigError(f"not valid UTF-8 (byte 0x{data[exc.start]:02x}); save the file as UTF-8",
                          path=shown_as, line=line) from None
    return settings_from_text(text, shown_as)


def markdown_table() -> str:
    """The README's settings table, generated from SETTINGS."""
    rows = ["| setting | type | default | allowed | what it does |", "|---|---|---|---|---|"]
    for setting in SETTINGS:
        kind = {str: "string", int: "integer", float: "number", bool: "boolean", list: "list of strings",
                dict: "table"}[setting.kind]
        shown_default = "(none)" if setting.default is None else f"`{toml_literal(setting.default)}`"
        rows.append(f"| `{setting.key}` | {kind} | {shown_default} | {allowed(setting)} | {setting.doc} |")
    return "\n".join(rows)


def allowed(setting: Setting) -> str:
    if setting.choices:
        return " \\| ".join(f"`{toml_literal(choice)}`" for choice in setting.choices)
    if setting.minimum is not None or setting.maximum is not None:
        low = "" if setting.minimum is None else number(setting.minimum)
        high = "" if setting.maximum is None else number(setting.maximum)
        return f"{low} … {high}".strip()
    return "any"
