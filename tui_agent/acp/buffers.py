"""The editor's unsaved buffers: when the client offers `fs/read_text_file`, read_file shows the text the editor
holds for a project file (what the person sees, unsaved edits included) rather than the file on disk."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from acp import RequestError

from tui_agent.core.agent.file_tools import DEFAULT_READ_LINES, numbered_output
from tui_agent.core.agent.toolbase import ToolContext, ToolOutput
from tui_agent.core.content import JsonObject

if TYPE_CHECKING:
    from acp.interfaces import Client

UNSAVED_NOTE = "\n[from the editor's buffer: it has changes not saved to disk; edit_file and write_file change the file on disk]"


class EditorBuffers:
    """The executor's gate (`callgate.CallGate`): after a read_file of a text file, the client's text replaces the
    disk's when the two differ. A client that fails to answer leaves the disk's text."""

    def __init__(self, client: Client, session_id: str) -> None:
        self.client = client
        self.session_id = session_id

    async def before_call(self, context: ToolContext, arguments: JsonObject) -> JsonObject:
        return arguments

    async def after_call(self, context: ToolContext, arguments: JsonObject, output: ToolOutput) -> ToolOutput:
        relative = arguments.get("path")
        if context.tool_name != "read_file" or output.is_error or output.blocks or not isinstance(relative, str):
            return output
        path = (context.project.root / relative).resolve()
        try:
            disk = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return output  # a binary file, or gone meanwhile: the tool's own answer stands
        try:
            answer = await self.client.read_text_file(session_id=self.session_id, path=str(path))
        except (RequestError, ConnectionError):
            return output
        if answer.content == disk:
            return output
        shown = numbered_output(answer.content, _positive(arguments.get("offset"), 1),
                                _positive(arguments.get("limit"), DEFAULT_READ_LINES))
        return ToolOutput(shown.text + UNSAVED_NOTE, truncated=shown.truncated)


def _positive(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else default


__all__ = ["EditorBuffers"]
