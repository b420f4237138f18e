"""Project images for the model: the type from the file's own bytes, the API's size limits, a base64 image block."""

from __future__ import annotations

import base64
import struct
from dataclasses import dataclass
from collections.abc import Sequence
from typing import cast

from tui_agent.core.content import ApiMessage, ImageBlock, MediaType

MAX_IMAGE_BYTES = 3_750_000  # the API takes at most 5 MB of base64 per image: 3.75 MB of file
MAX_SIDE = 8000  # pixels; the API refuses larger images
IMAGE_TOKENS = 1600  # what a full-size image costs (the API scales larger ones down to about 1.15 megapixels)
SIGNATURES = ((b"\x89PNG\r\n\x1a\n", "image/png"), (b"\xff\xd8\xff", "image/jpeg"), (b"GIF87a", "image/gif"), (b"GIF89a", "image/gif"))


@dataclass(frozen=True)
class ImageFile:
    media_type: str
    size: tuple[int, int] | None  # (width, height) when the header says it (PNG, GIF, WebP VP8X/VP8L/VP8)


def sniff(data: bytes) -> ImageFile | None:
    """The image type the bytes begin with (never the file name: anything can be called .png), or None."""
    media_type = next((kind for magic, kind in SIGNATURES if data.startswith(magic)), None)
    if media_type is None and data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        media_type = "image/webp"
    if media_type is None:
        return None
    return ImageFile(media_type, _dimensions(media_type, data))


def _dimensions(media_type: str, data: bytes) -> tuple[int, int] | None:
    try:
        if media_type == "image/png" and data[12:16] == b"IHDR":
            width, height = struct.unpack(">II", data[16:24])
            return int(width), int(height)
        if media_type == "image/gif":
            width, height = struct.unpack("<HH", data[6:10])
            return int(width), int(height)
        if media_type == "image/webp":
            chunk = data[12:16]
            if chunk == b"VP8X":
                return 1 + int.from_bytes(data[24:27], "little"), 1 + int.from_bytes(data[27:30], "little")
            if chunk == b"VP8L":
                bits = int.from_bytes(data[21:25], "little")
                return 1 + (bits & 0x3FFF), 1 + ((bits >> 14) & 0x3FFF)
            if chunk == b"VP8 ":
                width, height = struct.unpack("<HH", data[26:30])
                return int(width) & 0x3FFF, int(height) & 0x3FFF
    except struct.error:
        return None
    return None


def image_block(data: bytes, image: ImageFile) -> ImageBlock:
    media_type = cast(MediaType, image.media_type)  # one of SIGNATURES' kinds
    return {"type": "image", "source": {"type": "base64", "media_type": media_type, "data": base64.b64encode(data).decode("ascii")}}


def refusal(name: str, data: bytes, image: ImageFile) -> str:
    """Why this image cannot be sent ("" when it can), with what to do instead."""
    if len(data) > MAX_IMAGE_BYTES:
        return (f"{name} is a {image.media_type} of {len(data) / 1e6:.1f} MB: too big to show (the limit is "
                f"{MAX_IMAGE_BYTES / 1e6:.2f} MB per image); make a smaller copy first, e.g. with ImageMagick: "
                f"`convert {name} -resize 1568x1568 smaller.png`")
    if image.size is not None and max(image.size) > MAX_SIDE:
        return f"{name} is {image.size[0]}x{image.size[1]} pixels: too large to show (at most {MAX_SIDE} on a side); resize it first"
    return ""


def image_token_correction(messages: Sequence[ApiMessage]) -> int:
    """Tokens to take off a characters/4 estimate of the messages: an image costs about IMAGE_TOKENS, not its base64."""
    correction = 0
    for message in messages:
        for block in message["content"]:
            inner: object = block.get("content") if block["type"] == "tool_result" else [block]
            for part in inner if isinstance(inner, list) else ():
                data = _base64_data(part)
                correction += len(data) // 4 - IMAGE_TOKENS if data is not None else 0
    return correction


def _base64_data(part: object) -> str | None:
    """The base64 data of an image block (a part of a resumed session's message may be anything)."""
    if not isinstance(part, dict) or part.get("type") != "image":
        return None
    source = part.get("source")
    data = source.get("data") if isinstance(source, dict) else None
    return data if isinstance(data, str) else None
