"""Every `.agent/config.toml` setting in one table (name, type, range, default, doc) and the validated Settings it yields."""

from __future__ import annotations

import difflib
import json
import math
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.core.hostnames import check_names
from tui_agent.core import projectfs
from tui_agent.core.errors import TuiAgentError

CONFIG_NAME = ".agent/config.toml"


class ConfigError(TuiAgentError, ValueError):
    """`.agent/config.toml` is invalid; the message is one line: file:line, what is wrong, how to fix it."""

    def __init__(self, message: str, *, path: str = CONFIG_NAME, line: int | None = None) -> None:
        self.path, self.line, self.reason = path, line, message
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")


@dataclass(frozen=True)
class Setting:
    """One setting: `key` is dotted (`catalog.top_k` is `top_k` in `[catalog]`); `kind` is str, int, float, bool, list or dict."""

    key: str
    kind: type
    default: Any
    doc: str
    choices: tuple[Any, ...] = ()
    minimum: float | None = None
    maximum: float | None = None
    attr: str = ""
    """The Settings field; by default the key with dots as underscores (`catalog_top_k`)."""

    @property
    def field_name(self) -> str:
        return self.attr or self.key.replace(".", "_")

    @property
    def section(self) -> str:
        return self.key.rpartition(".")[0]

    @property
    def name(self) -> str:
        return self.key.rpartition(".")[2]


# To add a setting: one entry here and one field in Settings below, its default read from this table
# (`default("section.key")`; a list setting has a tuple default and its values become tuples). The README table
# is regenerated with `tuiagent config --markdown` (tests/test_settings.py fails until it is).
SETTINGS: tuple[Setting, ...] = (
    Setting("model", str, None, "model id sent to the Messages API (default: a current Sonnet)"),
    Setting("permissions.mode", str, "ask", "ask before shell commands, writes and network; auto accepts edits; "
            "read-only refuses them; plan is read-only until a proposed plan is approved",
            choices=("ask", "auto", "read-only", "plan"), attr="permission_mode"),
    Setting("sandbox.min_level", str, None, "refuse to run agent code below this isolation tier",
            choices=("rlimits", "bubblewrap")),
    Setting("sandbox.protected", list, (), "extra globs agent code may never write, on top of .git, .agent/, "
            "hooks, editor and shell config", attr="protected_globs"),
    Setting("permissions.allow", list, (), "allow rules: calls they cover are not asked about, e.g. "
            "`run_shell(pytest:*)` (prefix), `run_shell(make test)` (exact), `write_file` (the tool)",
            attr="allow_rules"),
    Setting("sandbox.env", list, (), "names of extra environment variables run_shell and agent code see "
            "(secret-looking names, `*_TOKEN`, `*_KEY`, `*_SECRET`, passwords, are never passed)"),
    Setting("sandbox.paths", list, (), "extra folders (absolute or `~/…`) agent code sees read-only; the home itself, "
            "secrets, /tmp and other users' homes are refused"),
    Setting("sandbox.network", list, (), "host names (`*.example.com` covers names below it) a run_shell command or "
            "run_python snippet granted the network may reach, through the sandbox's proxy; empty: any public name (never this machine or its LAN)"),
    Setting("catalog.token_budget", int, 2000, "tokens of catalog index carried in every system prompt",
            minimum=0, maximum=1_000_000),
    Setting("catalog.top_k", int, 40, "tools sent with a full schema; search_tools / call_tool reach the rest",
            minimum=0, maximum=10_000),
    Setting("agent.max_turns", int, 50, "model requests allowed for one prompt before the turn stops",
            minimum=1, maximum=100_000, attr="max_turns"),
    Setting("agent.thinking", str, None, "extended thinking: \"adaptive\", \"off\" or a budget in tokens (\"16000\"); "
            "default adaptive for Claude models that have it, off for others (--thinking)", attr="thinking"),
    Setting("agent.effort", str, None, "how much effort the model puts into a reply (output_config.effort; --effort); "
            "default: the model's own", choices=("low", "medium", "high", "xhigh", "max"), attr="effort"),
    Setting("web.search", bool, False, "offer the API's server-side web search tool to models that have it "
            "(searches run at Anthropic and are billed per search)"),
    Setting("web.search_max_uses", int, 5, "web searches the model may run in one request", minimum=1, maximum=50),
    Setting("ui.notify_after_s", int, 30, "when a turn that ran at least this many seconds ends, ring the terminal bell "
            "(and send a desktop notification where the terminal has them); 0 turns it off", minimum=0, maximum=86400),
)
BY_KEY: dict[str, Setting] = {setting.key: setting for setting in SETTINGS}
SECTIONS: frozenset[str] = frozenset(setting.section for setting in SETTINGS if setting.section)


def default(key: str) -> Any:
    return BY_KEY[key].default


@dataclass(frozen=True)
class Settings:
    """Validated project settings; `warnings` holds one line per ignored (misspelled or unknown) key."""

    model: str | None = default("model")
    permission_mode: str = default("permissions.mode")
    sandbox_min_level: str | None = default("sandbox.min_level")
    protected_globs: tuple[str, ...] = default("sandbox.protected")
    allow_rules: tuple[str, ...] = default("permissions.allow")
    sandbox_env: tuple[str, ...] = default("sandbox.env")
    sandbox_paths: tuple[str, ...] = default("sandbox.paths")
    sandbox_network: tuple[str, ...] = default("sandbox.network")
    catalog_token_budget: int = default("catalog.token_budget")
    catalog_top_k: int = default("catalog.top_k")
    max_turns: int = default("agent.max_turns")
    thinking: str | None = default("agent.thinking")
    effort: str | None = default("agent.effort")
    web_search: bool = default("web.search")
    web_search_max_uses: int = default("web.search_max_uses")
    ui_notify_after_s: int = default("ui.notify_after_s")
    extra: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


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


def type_ok(setting: Setting, value: Any) -> bool:
    if isinstance(value, bool):
        return setting.kind is bool
    if setting.kind is float:
        return isinstance(value, (int, float))
    if setting.kind is list:
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    return isinstance(value, setting.kind)


def number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


def check_value(setting: Setting, value: Any) -> str | None:
    """What is wrong with `value` for `setting` (and how to fix it), or None when it is valid."""
    fix = f"write e.g. {example(setting)}"
    if not type_ok(setting, value):
        return f"{setting.key} must be {TYPE_NAMES[setting.kind]}, not {describe_value(value)}; {fix}"
    if isinstance(value, float) and not math.isfinite(value):
        return f"{setting.key} must be a finite number, not {value}; {fix}"
    if setting.key == "sandbox.network":
        try:
            check_names(value, setting.key)
        except ValueError as exc:
            return f"{exc}; {fix}"
    if setting.choices and value not in setting.choices:
        allowed = ", ".join(toml_literal(choice) for choice in setting.choices)
        return f"{setting.key} = {shown(value)} is not allowed; use one of {allowed}"
    if setting.minimum is not None and value < setting.minimum:
        return f"{setting.key} = {value} is below the minimum {number(setting.minimum)}; {fix}"
    if setting.maximum is not None and value > setting.maximum:
        return f"{setting.key} = {value} is above the maximum {number(setting.maximum)}; {fix}"
    return None


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
    return settings_from_mapping(data, KeyLines(text), path)


def settings_from_mapping(data: dict[str, Any], lines: KeyLines | None = None, path: str = CONFIG_NAME) -> Settings:
    """Validate parsed TOML against SETTINGS: wrong types and ranges raise ConfigError, unknown keys become warnings."""
    lines = lines or KeyLines("")
    values: dict[str, Any] = {}
    warnings: list[str] = []
    extra: dict[str, Any] = {}
    for key, value in data.items():
        if key in SECTIONS:
            if not isinstance(value, dict):
                raise ConfigError(f"[{key}] must be a table, not {describe_value(value)}; write a [{key}] header "
                                  f"with its settings below it", path=path, line=lines.line(key))
            for name, inner in value.items():
                collect(f"{key}.{name}", inner, values, warnings, lines, path)
        elif key in BY_KEY:
            collect(key, value, values, warnings, lines, path)
        else:
            extra[key] = value
            warnings.append(unknown_key_warning(key, lines, path))
    return Settings(**values, extra=extra, warnings=tuple(warnings))


def collect(key: str, value: Any, values: dict[str, Any], warnings: list[str], lines: KeyLines, path: str) -> None:
    setting = BY_KEY.get(key)
    if setting is None:
        warnings.append(unknown_key_warning(key, lines, path))
        return
    problem = check_value(setting, value)
    if problem is not None:
        raise ConfigError(problem, path=path, line=lines.line(key))
    values[setting.field_name] = float(value) if setting.kind is float else tuple(value) if setting.kind is list else value


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
