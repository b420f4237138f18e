"""The grep and list_files built-ins: ripgrep's semantics (see search.py), Claude Code's Grep/Glob parameters."""

from __future__ import annotations

import os
from pathlib import Path

from tui_agent.core.agent.paths import PathRefused, confine, relative_name
from tui_agent.core.agent.search import GrepQuery, Hit, SearchError, SearchResult, by_mtime, is_agent_state
from tui_agent.core.agent import search
from tui_agent.core.content import JsonObject
from tui_agent.core.agent.toolbase import BuiltinTool, ToolContext, ToolFailure, ToolOutput, optional_int, require_str, schema, truncate

DEFAULT_CONTENT_LINES = 500
DEFAULT_LISTED = 1000
MODES = ("content", "files_with_matches", "count")


def _search_path(ctx: ToolContext, args: JsonObject) -> tuple[Path, str]:
    """The real project root and the project-relative folder or file to search (refused outside, or in .agent state)."""
    root = Path(os.path.realpath(ctx.project.root))
    raw = args.get("path") or "."
    if not isinstance(raw, str):
        raise ToolFailure("`path` must be a string")
    try:
        real = confine(root, raw)
    except PathRefused as refused:
        raise ToolFailure(str(refused)) from None
    relative = relative_name(root, real)
    if is_agent_state(relative + "/") or relative == ".git" or relative.startswith(".git/"):
        raise ToolFailure(f"refused: {relative} is tuiagent's or git's own bookkeeping, not project files")
    if not real.exists():
        raise ToolFailure(f"{relative} does not exist")
    return root, relative


def _flag(args: JsonObject, *keys: str) -> bool:
    for key in keys:
        value = args.get(key)
        if value is not None:
            if not isinstance(value, bool):
                raise ToolFailure(f"`{key}` must be true or false")
            return value
    return False


def _context(args: JsonObject) -> tuple[int, int]:
    around = optional_int(args, "-C", None) or optional_int(args, "context", None) or 0
    before = optional_int(args, "-B", None)
    after = optional_int(args, "-A", None)
    values = (around if before is None else before, around if after is None else after)
    if min(values) < 0:
        raise ToolFailure("context line counts (-A, -B, -C) must not be negative")
    return values


def _globs(args: JsonObject, key: str) -> tuple[str, ...]:
    value = args.get(key)
    if value is None or value == "":
        return ()
    if not isinstance(value, str):
        raise ToolFailure(f"`{key}` must be a glob string such as `*.py` or `src/**/*.{{ts,tsx}}`")
    if value.lstrip("!").startswith("/") or ".." in value.split("/"):
        raise ToolFailure(f"refused: `{key}` must be relative to the project and must not contain `..`")
    return (value,)


def grep_query(args: JsonObject) -> GrepQuery:
    mode = args.get("output_mode") or "content"
    if mode not in MODES:
        raise ToolFailure(f"`output_mode` must be one of {', '.join(MODES)}")
    file_type = args.get("type")
    if file_type is not None and not isinstance(file_type, str):
        raise ToolFailure("`type` must be a file type name such as `py`")
    before, after = _context(args)
    return GrepQuery(pattern=require_str(args, "pattern"), globs=_globs(args, "glob"), file_type=file_type or None,
                     ignore_case=_flag(args, "-i", "ignore_case"), before=before, after=after, mode=str(mode),
                     multiline=_flag(args, "multiline"))


async def grep(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    query = grep_query(args)
    root, relative = _search_path(ctx, args)
    limit = optional_int(args, "head_limit", None)
    if limit is not None and limit < 1:
        raise ToolFailure("`head_limit` must be positive")
    try:
        found = await search.grep(root, GrepQuery(**{**query.__dict__, "path": relative}))
    except SearchError as error:
        raise ToolFailure(str(error)) from None
    return _grep_output(root, query, found, limit)


def _grep_output(root: Path, query: GrepQuery, found: SearchResult, limit: int | None) -> ToolOutput:
    if query.mode == "files_with_matches":
        lines = by_mtime(root, found.files)
        unit = "files"
    elif query.mode == "count":
        lines = [f"{name}:{found.counts[name]}" for name in sorted(found.counts)]
        unit = "files"
    else:
        ordered = _by_path(found.hits, bool(query.before or query.after))
        cap = limit or DEFAULT_CONTENT_LINES
        lines = [hit.shown() for hit in ordered[:cap]] + [""] * max(0, len(ordered) - cap)  # only what is shown is formatted
        unit = "lines"
    if not lines:
        return ToolOutput("\n".join([f"no match for {query.pattern!r}", *(f"[{note}]" for note in found.notes)]))
    cap = limit or (DEFAULT_CONTENT_LINES if query.mode == "content" else DEFAULT_LISTED)
    shown = lines[:cap]
    notes = []
    if query.mode == "count":
        notes.append(f"[{sum(found.counts.values())} matching lines in {len(found.counts)} files]")
    if len(lines) > cap:
        notes.append(f"[{len(lines) - cap} more {unit} not shown; narrow the search or raise head_limit]")
    if found.cut:
        notes.append("[the search stopped early: too much output; narrow the pattern, the path or the glob]")
    notes += [f"[{note}]" for note in found.notes]
    text, truncated = truncate("\n".join(shown + notes))
    return ToolOutput(text, truncated=truncated or len(lines) > cap or found.cut)


def _by_path(hits: list[Hit], with_context: bool) -> list[Hit]:
    """rg prints files in the order its threads finish: group by file, files by name (a stable answer); with context
    lines, groups are parted by `--` as rg parts them."""
    groups: dict[str, list[Hit]] = {}
    for hit in hits:
        group = groups.get(hit.path)
        if group is None:
            groups[hit.path] = group = []
        group.append(hit)
    ordered: list[Hit] = []
    for name in sorted(groups):
        group = groups[name]
        while group and group[0].is_break:
            group = group[1:]
        while group and group[-1].is_break:
            group = group[:-1]
        if with_context and ordered and group:
            ordered.append(Hit(name, ""))
        ordered.extend(hit for index, hit in enumerate(group) if not hit.is_break or not group[index - 1].is_break)
    return ordered


async def list_files(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    pattern = require_str(args, "pattern")
    globs = _globs(args, "pattern")
    root, relative = _search_path(ctx, args)
    if relative != "." and not pattern.startswith(relative.rstrip("/") + "/") and "/" in pattern.lstrip("*/"):
        globs = (f"{relative}/{pattern}",)  # a pattern with folders is read relative to `path`, as rg reads it from the root
    try:
        names, _, linked = await search.list_files(root, relative, globs)
    except SearchError as error:
        raise ToolFailure(str(error)) from None
    notes = "".join(f"\n[{note}]" for note in linked)
    if not names:
        return ToolOutput(f"no files match {pattern!r}" + (f" under {relative}" if relative != "." else "") + notes)
    limit = optional_int(args, "head_limit", None) or DEFAULT_LISTED
    shown = names[:limit]
    more = f"\n[{len(names) - limit} more files not shown; narrow the pattern]" if len(names) > limit else ""
    return ToolOutput("\n".join(shown) + more + notes, truncated=bool(more))


PATH: JsonObject = {"type": "string", "description": "a file or folder relative to the project root (default: the whole project)"}
GLOB_DOC = ("rg-style glob, as in .gitignore: `*.py` matches at any depth, `src/*.py` only in src/, `**` crosses folders, "
            "`{a,b}` alternatives, a leading `!` excludes")

GREP_SCHEMA = schema({
    "pattern": {"type": "string", "description": "regular expression (ripgrep syntax), e.g. `def \\w+_name` or `log.*Error`"},
    "path": PATH,
    "glob": {"type": "string", "description": "only files matching this " + GLOB_DOC},
    "type": {"type": "string", "description": "only files of this type: py, js, ts, rust, go, java, c, cpp, md, json, toml, yaml, ..."},
    "output_mode": {"type": "string", "enum": list(MODES),
                    "description": "content: matching lines as `path:line: text` (default); files_with_matches: file names, newest first; count: matches per file"},
    "-i": {"type": "boolean", "description": "case-insensitive"},
    "-A": {"type": "integer", "minimum": 0, "description": "lines of context after each match (content mode)"},
    "-B": {"type": "integer", "minimum": 0, "description": "lines of context before each match (content mode)"},
    "-C": {"type": "integer", "minimum": 0, "description": "lines of context before and after each match (content mode)"},
    "head_limit": {"type": "integer", "minimum": 1, "description": "at most this many lines / files (default 500 lines, 1000 files)"},
    "multiline": {"type": "boolean", "description": "let the pattern span lines (`.` matches newlines)"},
}, ["pattern"])

SEARCH_TOOLS: tuple[BuiltinTool, ...] = (
    BuiltinTool("list_files", "List the project's files matching a glob, newest modification first. Honours .gitignore/.ignore "
                "(like ripgrep); pattern is an " + GLOB_DOC + ", e.g. `**/*.py`, `*.md`, `src/**/test_*.py`.",
                schema({"pattern": {"type": "string"}, "path": PATH,
                        "head_limit": {"type": "integer", "minimum": 1, "description": "at most this many files (default 1000)"}},
                       ["pattern"]), list_files),
    BuiltinTool("grep", "Search the project's files with ripgrep (regular expressions; .gitignore/.ignore honoured, binary "
                "files skipped). Narrow with path, glob or type; output_mode picks lines, file names or counts.",
                GREP_SCHEMA, grep),
)
