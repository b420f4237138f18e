"""API-valid, collision-free names for MCP tools: `mcp__<server>__<tool>`, truncated and hashed when too long."""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict
from collections.abc import Iterable

PREFIX = "mcp__"
MAX_LENGTH = 64
API_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_UNSAFE = re.compile(r"[^A-Za-z0-9_]")
_HASH_CHARS = 8


def _clean(part: str) -> str:
    return _UNSAFE.sub("_", part) or "_"


def _digest(server: str, tool: str) -> str:
    return hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:_HASH_CHARS]


def _hashed(base: str, server: str, tool: str) -> str:
    return f"{base[:MAX_LENGTH - _HASH_CHARS - 1]}_{_digest(server, tool)}"


def plain_name(server: str, tool: str) -> str:
    """`mcp__server__tool` with every character outside [A-Za-z0-9_] made `_` (so it is a Python identifier too)."""
    return f"{PREFIX}{_clean(server)}__{_clean(tool)}"


def assign_names(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(server, tool) → a name matching ^[a-zA-Z0-9_-]{1,64}$, distinct for distinct pairs, stable across calls.

    A name that is too long, or that two pairs would share after cleaning, becomes its first 55 characters
    plus `_` and 8 hex digits of a hash of the original (server, tool)."""
    unique = sorted(set(pairs))
    by_plain: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for server, tool in unique:
        by_plain[plain_name(server, tool)].append((server, tool))
    names: dict[tuple[str, str], str] = {}
    for plain, group in by_plain.items():
        for server, tool in group:
            fits = len(plain) <= MAX_LENGTH and len(group) == 1
            names[(server, tool)] = plain if fits else _hashed(plain, server, tool)
    taken: set[str] = set()
    for pair in unique:  # a hash prefix shared by two pairs: extremely unlikely, still never a duplicate
        name, extra = names[pair], 0
        while name in taken:
            extra += 1
            name = _hashed(names[pair], pair[0], f"{pair[1]}#{extra}")
        names[pair] = name
        taken.add(name)
    return names
