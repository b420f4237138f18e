"""A model of the documented prompt-cache rules, to report cache_read/cache_creation tokens like the real API.

The prompt is a sequence of blocks: every tool definition, then every system block, then every content block of
every message (a string content is one block). A block carrying `cache_control` is a breakpoint. A request
reads the longest prefix that an earlier request wrote, ending at one of its breakpoints or up to 20 blocks before
one; it writes the prefix ending at each of its breakpoints that holds at least 1,024 tokens. Blocks are compared
by content (cache_control aside) and position, so any change early in the prompt invalidates all that follows.
Tokens are approximated as characters of the block's canonical JSON / 4, the same way everywhere.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

CHARS_PER_TOKEN = 4
MIN_CACHEABLE_TOKENS = 1024
LOOKBACK_BLOCKS = 20


@dataclass(frozen=True)
class PromptBlock:
    """One block of the prompt prefix."""

    key: str
    tokens: int
    breakpoint: bool


@dataclass(frozen=True)
class CacheUsage:
    """What one request cost: tokens read from the cache, written to it, not cached; and its ideal (shared prefix)."""

    read: int
    write: int
    uncached: int
    ideal: int

    @property
    def total(self) -> int:
        return self.read + self.write + self.uncached


def _canonical(block: Any) -> str:
    if isinstance(block, dict):
        block = {key: value for key, value in block.items() if key != "cache_control"}
    return json.dumps(block, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _block(prefix: str, value: Any) -> PromptBlock:
    text = _canonical(value)
    tokens = max(1, (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN)
    return PromptBlock(prefix + text, tokens, isinstance(value, dict) and "cache_control" in value)


def prompt_blocks(body: dict[str, Any]) -> list[PromptBlock]:
    """The request's prompt as blocks, in cache order: tools, system, messages."""
    blocks = [_block("tool:", tool) for tool in body.get("tools") or []]
    system = body.get("system")
    if isinstance(system, str) and system:
        blocks.append(_block("system:", system))
    elif isinstance(system, list):
        blocks.extend(_block("system:", part) for part in system)
    for message in body.get("messages") or []:
        content = message.get("content")
        parts = [content] if isinstance(content, str) else list(content or [])
        for position, part in enumerate(parts):
            blocks.append(_block(f"{message.get('role')}:{'start' if position == 0 else 'next'}:", part))
    return blocks


class PromptCache:
    """The cache of one server: prefixes written so far and every prefix seen (for the ideal)."""

    def __init__(self) -> None:
        self._written: set[str] = set()
        self._seen: set[str] = set()
        self.log: list[CacheUsage] = []

    def account(self, body: dict[str, Any]) -> CacheUsage:
        """Read, write and record the prefixes of one accepted request; what it read, wrote and could have read."""
        blocks = prompt_blocks(body)
        hashes, cumulative = self._prefixes(str(body.get("model", "")), blocks)
        ideal = max((cumulative[p] for p in range(len(blocks)) if hashes[p] in self._seen), default=0)
        breakpoints = [p for p, block in enumerate(blocks) if block.breakpoint]
        read = 0
        for point in breakpoints:
            for p in range(point, max(-1, point - LOOKBACK_BLOCKS - 1), -1):
                if hashes[p] in self._written:
                    read = max(read, cumulative[p])
                    break
        written_to = read
        for point in breakpoints:
            if cumulative[point] >= MIN_CACHEABLE_TOKENS:
                self._written.add(hashes[point])
                written_to = max(written_to, cumulative[point])
        self._seen.update(hashes)
        total = cumulative[-1] if blocks else 0
        usage = CacheUsage(read=read, write=written_to - read, uncached=total - written_to, ideal=ideal)
        self.log.append(usage)
        return usage

    @staticmethod
    def _prefixes(model: str, blocks: list[PromptBlock]) -> tuple[list[str], list[int]]:
        digest = hashlib.sha256(model.encode())
        hashes: list[str] = []
        cumulative: list[int] = []
        tokens = 0
        for block in blocks:
            digest.update(hashlib.sha256(block.key.encode()).digest())
            hashes.append(digest.copy().hexdigest())
            tokens += block.tokens
            cumulative.append(tokens)
        return hashes, cumulative
