"""How a tuiagent tool call looks to an ACP client: its kind, title, file locations and the diff of a file edit."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from acp.schema import FileEditToolCallContent, ToolCallLocation, ToolKind

from tui_agent.core.content import JsonObject

KINDS: dict[str, ToolKind] = {
    "read_file": "read", "write_file": "edit", "edit_file": "edit", "create_tool": "edit", "create_recipe": "edit",
    "prune_tool": "delete", "list_files": "search", "grep": "search", "search_tools": "search",
    "run_shell": "execute", "run_python": "execute", "call_tool": "execute", "update_plan": "think",
    "propose_plan": "switch_mode",
}
TEXT_LIMIT = 20_000
"""Characters of a call's output or result shown in its tool_call content (the model gets the whole result)."""


@dataclass
class CallView:
    """One call as announced: where it reads or writes, and (an edit) the file's text before it ran."""

    call_id: str
    name: str
    arguments: JsonObject
    path: Path | None = None
    before: str | None = None
    output: list[str] = field(default_factory=list)


def edited_path(root: Path, name: str, arguments: JsonObject) -> Path | None:
    """The project file a call reads or writes, absolute (ACP locations and diffs carry absolute paths)."""
    if name in ("create_tool", "prune_tool") and isinstance(arguments.get("name"), str):
        return root / ".agent" / "tools" / f"{arguments['name']}.py"
    if name == "create_recipe" and isinstance(arguments.get("name"), str):
        return root / ".agent" / "recipes" / f"{arguments['name']}.toml"
    where = arguments.get("path")
    if name in ("read_file", "write_file", "edit_file", "list_files", "grep") and isinstance(where, str) and where:
        return (root / where) if not Path(where).is_absolute() else Path(where)
    return None


def read_text(path: Path | None) -> str | None:
    """The file's text, or None when it does not exist or is not text."""
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def view_of(root: Path, call_id: str, name: str, arguments: JsonObject, *, read: bool = True) -> CallView:
    """The call as announced; `read`: an edit's file is read now (its text before the call runs)."""
    path = edited_path(root, name, arguments)
    before = read_text(path) if read and KINDS.get(name) in ("edit", "delete") else None
    return CallView(call_id, name, arguments, path, before)


def title(view: CallView, root: Path) -> str:
    args = view.arguments
    command = args.get("command")
    if view.name == "run_shell" and isinstance(command, str):
        return f"run_shell: {command.splitlines()[0][:200] if command else ''}"
    if view.path is not None:
        try:
            shown = view.path.relative_to(root).as_posix()
        except ValueError:
            shown = str(view.path)
        return f"{view.name} {shown}"
    if view.name == "call_tool" and isinstance(args.get("name"), str):
        return f"call_tool {args['name']}"
    return view.name


def locations(view: CallView) -> list[ToolCallLocation] | None:
    return [ToolCallLocation(path=str(view.path))] if view.path is not None else None


def proposed_text(view: CallView) -> str | None:
    """What an edit would leave in the file (for the approval's diff), when the arguments say it."""
    args = view.arguments
    if view.name == "write_file" and isinstance(args.get("content"), str):
        return str(args["content"])
    if view.name in ("create_tool", "create_recipe") and isinstance(args.get("source"), str):
        return str(args["source"])
    old, new = args.get("old"), args.get("new")
    if view.name == "edit_file" and view.before is not None and isinstance(old, str) and isinstance(new, str) \
            and old in view.before:
        return view.before.replace(old, new, -1 if args.get("replace_all") else 1)
    return None


def diff(view: CallView, after: str | None) -> list[FileEditToolCallContent] | None:
    """The call's diff (old text None: a new file); None when it is not a file edit or nothing changed."""
    if view.path is None or after is None or after == view.before:
        return None
    return [FileEditToolCallContent(type="diff", path=str(view.path), old_text=view.before, new_text=after)]


def clipped(text: str) -> str:
    return text if len(text) <= TEXT_LIMIT else "…" + text[-TEXT_LIMIT:]
