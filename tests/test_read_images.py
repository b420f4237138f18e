"""read_file on pictures sends image blocks (type from the bytes, size-limited); edit_file's replace_all."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, of_type, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.core.agent.context_limit import request_tokens, shorten_old_tool_results
from tui_agent.core.agent.file_tools import edit_file, read_file
from tui_agent.core.agent.permissions import Permissions, approve_all
from tui_agent.core.agent.toolbase import ToolContext, ToolFailure
from tui_agent.core.events import ToolCallFinished
from tui_agent.core.project import Project
from tui_agent.core.runtime_state import agent_of


def png(width: int, height: int, padding: int = 0) -> bytes:
    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(min(height, 4)))
    extra = chunk(b"tEXt", b"pad\x00" + b"x" * padding) if padding else b""
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) + extra
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


def ctx(repo: Path, name: str = "read_file") -> ToolContext:
    return ToolContext(Project.at(repo), Permissions("auto", approve_all), call_id="c1", tool_name=name)


async def test_pictures_become_image_blocks_and_their_type_comes_from_the_bytes(repo: Path) -> None:
    (repo / "shot.png").write_bytes(png(3, 2))
    (repo / "anim.gif").write_bytes(b"GIF89a" + struct.pack("<HH", 40, 30) + b"\x00" * 20)
    (repo / "photo.webp").write_bytes(b"RIFF\x00\x00\x00\x00WEBPVP8L" + b"\x00" * 5 + (99 | (49 << 14)).to_bytes(4, "little") + b"\x00" * 8)
    (repo / "fake.png").write_text("not a picture\n")
    out = await read_file(ctx(repo), {"path": "shot.png"})
    assert "image/png" in out.text and "3x2 pixels" in out.text
    assert out.blocks[0]["source"] == {"type": "base64", "media_type": "image/png", "data": base64.b64encode(png(3, 2)).decode()}
    assert "40x30" in (await read_file(ctx(repo), {"path": "anim.gif"})).text
    webp = await read_file(ctx(repo), {"path": "photo.webp"})
    assert webp.blocks[0]["source"]["media_type"] == "image/webp" and "100x50" in webp.text
    fake = await read_file(ctx(repo), {"path": "fake.png"})
    assert not fake.blocks and "not a picture" in fake.text


async def test_too_big_pictures_are_refused_with_what_to_do(repo: Path) -> None:
    (repo / "huge.png").write_bytes(png(10, 10, padding=4_000_000))
    (repo / "wide.png").write_bytes(png(9000, 10))
    huge = await read_file(ctx(repo), {"path": "huge.png"})
    assert huge.is_error and not huge.blocks and "too big" in huge.text and "resize" in huge.text
    wide = await read_file(ctx(repo), {"path": "wide.png"})
    assert wide.is_error and "9000x10" in wide.text


async def test_the_image_reaches_the_model_in_the_tool_result(repo: Path) -> None:
    (repo / "bug.png").write_bytes(png(4, 4))
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("read_file", {"path": "bug.png"})), reply(text("A red square.")))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "what is in bug.png?")
            assert agent_of(runtime) is not None
            messages = agent_of(runtime).messages
    result = api.requests[1].tool_results()[0]
    assert [part["type"] for part in result["content"]] == ["text", "image"]
    assert not of_type(events, ToolCallFinished)[0].is_error
    assert request_tokens([], [], messages) < 3000  # an image counts as its token cost, not its base64 length
    assert shorten_old_tool_results(messages, keep_recent=0) == 1 and "image was removed" in str(messages)


async def test_edit_file_replace_all(repo: Path) -> None:
    (repo / "names.py").write_text("old = 1\nprint(old)\nold += old\n")
    with pytest.raises(ToolFailure, match="occurs 4 times.*replace_all"):
        await edit_file(ctx(repo, "edit_file"), {"path": "names.py", "old": "old", "new": "new"})
    out = await edit_file(ctx(repo, "edit_file"), {"path": "names.py", "old": "old", "new": "new", "replace_all": True})
    assert "replaced 4 occurrences" in out.text and (repo / "names.py").read_text() == "new = 1\nprint(new)\nnew += new\n"
    with pytest.raises(ToolFailure, match="true or false"):
        await edit_file(ctx(repo, "edit_file"), {"path": "names.py", "old": "new", "new": "x", "replace_all": "yes"})
