"""Catalog tools written out as Agent Skills folders (agentskills.io): `<dir>/<skill-name>/SKILL.md` and its script.

The script is the tool's last good version, byte for byte, with a small command-line entry appended (only in the
exported copy) so that `python scripts/<tool>.py x=1` runs it and `--test` runs its own tests, without tuiagent."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.core.errors import TuiAgentError
from tui_agent.core.agent.skills import MAX_DESCRIPTION, MAX_NAME, NAME, SKILL_FILE
from tui_agent.core.catalog.files import atomic_write
from tui_agent.core.catalog.models import ToolSpec
from tui_agent.core.content import JsonSchema, json_object, schema_properties, schema_required

SCRIPTS = "scripts"
MARKER_KEY = "tuiagent-tool"
"""The metadata key that marks a SKILL.md tuiagent wrote (so a second export may replace it)."""
SHIM_START = "\n\n# --- tuiagent skill export: command-line entry (not part of the catalog tool) ---\n"


class ExportError(TuiAgentError, ValueError):
    """An export that cannot be done as asked; nothing was written."""


@dataclass(frozen=True)
class ExportedSkill:
    tool: str
    skill: str
    folder: Path


def skill_name(tool: str) -> str:
    """The skill name for a tool name: lowercase, `_` as `-`, no leading, trailing or doubled hyphens."""
    name = re.sub(r"-+", "-", tool.lower().replace("_", "-")).strip("-")[:MAX_NAME].rstrip("-")
    if not NAME.match(name):
        raise ExportError(f"tool {tool!r} has no Agent Skills name (lowercase letters, digits and hyphens)")
    return name


def one_line(text: str) -> str:
    return " ".join(text.split())


def skill_description(spec: ToolSpec) -> str:
    """The tool's summary (with when to use it), at most the specification's 1024 characters."""
    summary = one_line(spec.description) or f"The {spec.name} tool."
    text = f"{summary} Runs the Python tool {spec.name} (scripts/{spec.name}.py) with arguments given on the command line."
    return text if len(text) <= MAX_DESCRIPTION else text[:MAX_DESCRIPTION - 1] + "…"


PLAIN_UNSAFE = re.compile(r"^[-?:,\[\]{}#&*!|>'\"%@`\d.+~]|: | #|:$|^(true|false|yes|no|on|off|null)$", re.IGNORECASE)


def yaml_scalar(text: str) -> str:
    """A one-line YAML string that reads back as `text`, in the simplest style that can hold it (plain, then double
    quotes without escapes, then single quotes), so naive frontmatter readers read it the same."""
    if text == text.strip() and text and not PLAIN_UNSAFE.search(text):
        return text
    if '"' not in text and "\\" not in text:
        return f'"{text}"'
    return "'" + text.replace("'", "''") + "'"


def _type_text(schema: JsonSchema) -> str:
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(str(k) for k in kind)
    if kind is None and "anyOf" in schema:
        options = schema["anyOf"]
        return " or ".join(_type_text(option) for option in options if isinstance(option, dict)) if isinstance(options, list) else ""
    return str(kind or "any JSON value")


def argument_lines(spec: ToolSpec) -> list[str]:
    properties = schema_properties(spec.input_schema)
    required = set(schema_required(spec.input_schema))
    lines = []
    for key, schema in properties.items():
        schema = schema if isinstance(schema, dict) else {}
        need = "required" if key in required else f"optional, default {json.dumps(schema.get('default'))}"
        about = f": {one_line(str(schema['description']))}" if schema.get("description") else ""
        lines.append(f"- `{key}` ({_type_text(schema)}, {need}){about}")
    return lines or ["- (none)"]


def example_arguments(spec: ToolSpec) -> str:
    """`key=value` words for the how-to (a placeholder per required argument)."""
    properties = schema_properties(spec.input_schema)
    words = [f"{key}=<{_type_text(json_object(properties.get(key)))}>" for key in schema_required(spec.input_schema)]
    return " ".join(words)


def access_text(spec: ToolSpec) -> str:
    writes = "It may change files under the current directory (WRITES = True)." if spec.writes else \
        "It only reads files (relative paths are taken from the current directory)."
    if spec.network is True:
        return writes + " It uses the network."
    if spec.network:
        return writes + f" It uses the network to reach: {', '.join(spec.network)}."
    return writes + " It does not use the network."


def skill_markdown(spec: ToolSpec, name: str) -> str:
    example = example_arguments(spec)
    front = [
        "---", f"name: {name}", f"description: {yaml_scalar(skill_description(spec))}",
        'compatibility: "Python 3.11 or newer; the script is self-contained (no tuiagent needed)"',
        "metadata:", f'  {MARKER_KEY}: "{spec.name}"', f'  tuiagent-version: "{spec.source_sha[:12]}"', "---",
    ]
    body = [
        f"# {spec.name}", "", spec.description.strip() or f"The {spec.name} tool.", "",
        "## How to run", "", "From this skill's folder:", "", "```sh",
        f"python {SCRIPTS}/{spec.name}.py {example}".rstrip(),
        f"python {SCRIPTS}/{spec.name}.py '{{\"key\": \"value\"}}'   # or all arguments as one JSON object",
        "```", "",
        "A `key=value` argument is read as JSON when it parses (numbers, lists, true/false), else as text; a string "
        "parameter always takes the text as is. The result is printed: text as it is, anything else as JSON. "
        "A failure exits with status 1 and the error on stderr.", "", access_text(spec), "",
        "Arguments:", *argument_lines(spec), "",
        "## Tests", "", "```sh", f"python {SCRIPTS}/{spec.name}.py --test", "```", "",
        f"runs the tool's own `test_*` functions ({len(spec.tests)} of them).", "",
    ]
    return "\n".join(front + body)


def _is_string(schema: Any) -> bool:
    kind = schema.get("type") if isinstance(schema, dict) else None
    return kind == "string" or (isinstance(kind, list) and "string" in kind)


def cli_shim(spec: ToolSpec) -> str:
    """The `__main__` entry appended to the exported script (never to the catalog file)."""
    strings = sorted(key for key, schema in schema_properties(spec.input_schema).items() if _is_string(schema))
    return SHIM_START + SHIM_TEMPLATE.replace("TOOL_NAME", spec.name).replace("STRING_KEYS", repr(tuple(strings)))


SHIM_TEMPLATE = '''if __name__ == "__main__":
    import json as _json
    import sys as _sys

    def _tuiagent_cli(argv):
        if argv == ["--test"]:
            found = sorted((value.__code__.co_firstlineno, key, value) for key, value in list(globals().items())
                           if key.startswith("test_") and callable(value) and hasattr(value, "__code__"))
            for _line, key, test in found:
                test()
                print("ok", key)
            print(len(found), "tests passed")
            return 0
        if len(argv) == 1 and argv[0].lstrip().startswith("{"):
            kwargs = _json.loads(argv[0])
        else:
            kwargs = {}
            for item in argv:
                key, sep, raw = item.partition("=")
                if not sep or not key:
                    print("usage: python TOOL_NAME.py key=value ... | '{json object}' | --test", file=_sys.stderr)
                    return 2
                try:
                    kwargs[key] = raw if key in STRING_KEYS else _json.loads(raw)
                except ValueError:
                    kwargs[key] = raw
        try:
            result = TOOL_NAME(**kwargs)
        except Exception as error:
            print(f"TOOL_NAME failed: {type(error).__name__}: {error}", file=_sys.stderr)
            return 1
        print(result if isinstance(result, str) else _json.dumps(result, indent=2, default=str))
        return 0

    _sys.exit(_tuiagent_cli(_sys.argv[1:]))
'''


def exported_script(spec: ToolSpec, data: bytes) -> bytes:
    """The tool file with the command-line entry appended, unless it already has a `__main__` block of its own."""
    if re.search(rb"^if\s+__name__\s*==\s*['\"]__main__['\"]\s*:", data, re.MULTILINE):
        return data
    return data + cli_shim(spec).encode("utf-8")


def strip_shim(data: bytes) -> bytes:
    """A script as exported, back to the tool file (only when its tail is exactly the entry tuiagent appends)."""
    start = data.rfind(SHIM_START.encode("utf-8"))
    if start < 0:
        return data
    tail = data[start:].decode("utf-8", errors="replace")
    name = re.search(r"result = (\w+)\(\*\*kwargs\)", tail)
    if name is None:
        return data
    strings = re.search(r"raw if key in (\(.*?\)) else _json", tail)
    if strings is None:
        return data
    expected = SHIM_START + SHIM_TEMPLATE.replace("TOOL_NAME", name.group(1)).replace("STRING_KEYS", strings.group(1))
    return data[:start] if tail == expected else data


def written_by_us(folder: Path) -> bool:
    """Whether `folder` may be written: absent, empty, or a skill an earlier export wrote (its SKILL.md says so)."""
    if not folder.exists() and not folder.is_symlink():
        return True
    if folder.is_symlink() or not folder.is_dir():
        return False
    skill = folder / SKILL_FILE
    if not skill.exists():
        return not any(folder.iterdir())
    try:
        return not skill.is_symlink() and f"\n  {MARKER_KEY}: " in skill.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def plan_export(specs: list[tuple[ToolSpec, bytes]], dest: Path) -> list[tuple[ExportedSkill, dict[Path, bytes]]]:
    """Every file to write, checked before any is written: names unique, no foreign SKILL.md replaced."""
    plans: list[tuple[ExportedSkill, dict[Path, bytes]]] = []
    taken: dict[str, str] = {}
    for spec, data in specs:
        name = skill_name(spec.name)
        if name in taken:
            raise ExportError(f"tools {taken[name]!r} and {spec.name!r} would both be skill {name!r}; nothing was written")
        taken[name] = spec.name
        folder = dest / name
        existing = folder / SKILL_FILE
        if not written_by_us(folder):
            raise ExportError(f"{folder} exists and was not written by tuiagent; nothing was written (choose "
                              "another folder or move it)")
        files = {existing: skill_markdown(spec, name).encode("utf-8"),
                 folder / SCRIPTS / f"{spec.name}.py": exported_script(spec, data)}
        plans.append((ExportedSkill(spec.name, name, folder), files))
    return plans


def write_export(specs: list[tuple[ToolSpec, bytes]], dest: Path) -> list[ExportedSkill]:
    """Write each tool as a skill folder under `dest` (created if needed); ExportError before writing anything."""
    if dest.exists() and not dest.is_dir():
        raise ExportError(f"{dest} is not a folder")
    plans = plan_export(specs, dest)
    for _skill, files in plans:
        for path, content in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(path, content)
    return [skill for skill, _files in plans]
