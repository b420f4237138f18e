"""The file built-ins: read_file, write_file, edit_file, list_files and grep, confined to the project."""

from __future__ import annotations

import difflib
import os
import tempfile
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.agent.images import ImageFile, image_block, refusal, sniff
from tui_agent.core.agent.paths import PathRefused, agent_area, confine, refuse_git_internals, relative_name
from tui_agent.core.agent.permissions import ApprovalRequest
from tui_agent.core.sandbox import matches_protected
from tui_agent.core.agent.search_tools import SEARCH_TOOLS
from tui_agent.core.content import JsonObject
from tui_agent.core.agent.toolbase import BuiltinTool, ToolContext, ToolFailure, ToolOutput, optional_int, require_str, schema, truncate
from tui_agent.core.events import Notice
from tui_agent.core.versioning import hookhold

DEFAULT_READ_LINES = 2000
MAX_LINE_CHARS = 2000


def _confined(ctx: ToolContext, path: str) -> Path:
    try:
        real = confine(ctx.project.root, path)
    except PathRefused as refused:
        raise ToolFailure(str(refused)) from None
    return real


def _is_binary(data: bytes) -> bool:
    return b"\x00" in data[:8192]


async def read_file(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    real = _confined(ctx, require_str(args, "path"))
    offset = optional_int(args, "offset", 1) or 1
    limit = optional_int(args, "limit", DEFAULT_READ_LINES) or DEFAULT_READ_LINES
    if offset < 1 or limit < 1:
        raise ToolFailure("`offset` (1-based line number) and `limit` (number of lines) must be positive")
    if real.is_dir():
        raise ToolFailure(f"{relative_name(ctx.project.root, real)} is a folder; use list_files")
    if not real.is_file():
        raise ToolFailure(f"{relative_name(ctx.project.root, real)} does not exist")
    data = projectfs.read_bytes(real)
    image = sniff(data)
    if image is not None:
        return _image_output(relative_name(ctx.project.root, real), data, image)
    if _is_binary(data):
        return ToolOutput(f"{relative_name(ctx.project.root, real)} is a binary file ({len(data)} bytes); not shown")
    return numbered_output(data.decode("utf-8", errors="replace"), offset, limit)


def numbered_output(content: str, offset: int, limit: int) -> ToolOutput:
    """read_file's view of a text: `limit` lines from line `offset`, numbered, long lines cut."""
    lines = content.splitlines()
    chosen = lines[offset - 1 : offset - 1 + limit]
    numbered = []
    for number, line in enumerate(chosen, start=offset):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + " [line cut]"
        numbered.append(f"{number:6}\t{line}")
    text = "\n".join(numbered) if numbered else f"(no lines from line {offset}; the file has {len(lines)} lines)"
    if offset - 1 + limit < len(lines):
        text += f"\n[showing lines {offset}-{offset - 1 + len(chosen)} of {len(lines)}; read on with offset={offset + len(chosen)}]"
    text, truncated = truncate(text)
    return ToolOutput(text, truncated=truncated)


def _image_output(name: str, data: bytes, image: ImageFile) -> ToolOutput:
    why_not = refusal(name, data, image)
    if why_not:
        return ToolOutput(why_not, is_error=True)
    size = f", {image.size[0]}x{image.size[1]} pixels" if image.size else ""
    return ToolOutput(f"{name}: {image.media_type}, {len(data)} bytes{size} (the image follows)", blocks=(image_block(data, image),))


async def _check_writable(ctx: ToolContext, real: Path, old: str | None, new: str) -> bool:
    """Refuse git's and tuiagent's own areas; ask (with the diff) for every other write, and for a protected path
    (`.agent/config.toml`, `.vscode/`, `.envrc`, ...) even in auto mode. True when the person saw this diff."""
    root = ctx.project.root
    try:
        refuse_git_internals(root, real)
    except PathRefused as refused:
        raise ToolFailure(str(refused)) from None
    name = relative_name(root, real)
    area = agent_area(root, real)
    if area in ("tools", "recipes"):
        raise ToolFailure(f"refused: {name} is in the catalog; use create_tool / create_recipe so it goes through the authoring pipeline")
    if area == "state":
        raise ToolFailure(f"refused: {name} is tuiagent's own state")
    if ctx.permissions.read_only:
        raise ToolFailure(f"refused: the session is in {ctx.permissions.mode} mode")
    guard = matches_protected(root, name)
    diff = "".join(difflib.unified_diff((old or "").splitlines(keepends=True), new.splitlines(keepends=True), f"a/{name}" if old is not None else "/dev/null", f"b/{name}"))
    summary = f"{'edit' if old is not None else 'create'} {name}"
    if guard is not None:
        summary += f" (protected path {guard}: always asked, even in auto mode)"
    return await ctx.require_approval(ApprovalRequest("write", ctx.tool_name, summary, diff or "(no change)", protected=guard is not None))


def _write_reviewed_or_held(ctx: ToolContext, real: Path, content: str, reviewed: bool) -> None:
    """Write the file; a change no person looked at holds catalog commits that would run git hooks (hookhold)."""
    if not reviewed:  # before the write: no commit in between runs hooks on it
        warning = hookhold.hold(ctx.project.root, f"{ctx.tool_name} {relative_name(ctx.project.root, real)} (not reviewed)")
        if warning:
            ctx.events.append(Notice(warning))
    _atomic_write(real, content)


def _atomic_write(real: Path, content: str) -> None:
    real.parent.mkdir(parents=True, exist_ok=True)
    mode = projectfs.written_mode(real)  # an update keeps the file's mode, a new file follows the umask (mkstemp: 0600)
    handle, temp_name = tempfile.mkstemp(dir=real.parent, prefix=f".{real.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(content)
        os.chmod(temp_name, mode)
        os.replace(temp_name, real)
    except BaseException:
        Path(temp_name).unlink(missing_ok=True)
        raise


def _read_text(real: Path) -> str | None:
    if not real.exists():
        return None
    if real.is_dir():
        raise ToolFailure(f"{real.name} is a folder")
    data = projectfs.read_bytes(real)
    if _is_binary(data):
        raise ToolFailure("refused: the file is binary")
    return data.decode("utf-8", errors="surrogateescape")


async def write_file(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    real = _confined(ctx, require_str(args, "path"))
    content = require_str(args, "content", allow_empty=True)
    old = _read_text(real)
    reviewed = await _check_writable(ctx, real, old, content)
    _write_reviewed_or_held(ctx, real, content, reviewed)
    name = relative_name(ctx.project.root, real)
    verb = "overwrote" if old is not None else "created"
    return ToolOutput(f"{verb} {name} ({len(content.splitlines())} lines)")


async def edit_file(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    real = _confined(ctx, require_str(args, "path"))
    old_text = require_str(args, "old")
    new_text = require_str(args, "new", allow_empty=True)
    current = _read_text(real)
    name = relative_name(ctx.project.root, real)
    if current is None:
        raise ToolFailure(f"{name} does not exist; use write_file to create it")
    replace_all = args.get("replace_all", False)
    if not isinstance(replace_all, bool):
        raise ToolFailure("`replace_all` must be true or false")
    count = current.count(old_text)
    if count == 0:
        raise ToolFailure(f"`old` was not found in {name}; it must match the file exactly (whitespace included). Read the file again.")
    if count > 1 and not replace_all:
        raise ToolFailure(f"`old` occurs {count} times in {name}; include more surrounding lines so it matches exactly once, "
                          "or set replace_all to change every occurrence")
    if old_text == new_text:
        raise ToolFailure("`old` and `new` are the same: nothing to change")
    updated = current.replace(old_text, new_text) if replace_all else current.replace(old_text, new_text, 1)
    reviewed = await _check_writable(ctx, real, current, updated)
    _write_reviewed_or_held(ctx, real, updated, reviewed)
    line = current[: current.index(old_text)].count("\n") + 1
    if replace_all and count > 1:
        return ToolOutput(f"edited {name}: replaced {count} occurrences (the first at line {line})")
    return ToolOutput(f"edited {name} at line {line} (-{len(old_text.splitlines())} +{len(new_text.splitlines())} lines)")


PATH: JsonObject = {"type": "string", "description": "path relative to the project root"}

FILE_TOOLS: tuple[BuiltinTool, ...] = (
    BuiltinTool("read_file", "Read a text file of the project, with line numbers. `offset` is the 1-based first line, `limit` the number of lines "
                "(default 2000). A PNG, JPEG, GIF or WebP image is shown to you as an image (at most 3.75 MB).",
                schema({"path": PATH, "offset": {"type": "integer", "minimum": 1}, "limit": {"type": "integer", "minimum": 1}}, ["path"]), read_file),
    BuiltinTool("write_file", "Create or overwrite a project file with the full `content`. Outside .agent/ this may need the user's approval.",
                schema({"path": PATH, "content": {"type": "string"}}, ["path", "content"]), write_file),
    BuiltinTool("edit_file", "Replace the exact text `old` (which must occur exactly once, unless `replace_all`) with `new` in a project file.",
                schema({"path": PATH, "old": {"type": "string"}, "new": {"type": "string"},
                        "replace_all": {"type": "boolean", "description": "replace every occurrence of `old` (e.g. to rename)"}},
                       ["path", "old", "new"]), edit_file),
    *SEARCH_TOOLS,
)
