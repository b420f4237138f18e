"""Glob patterns of file_changed triggers: `*`, `?`, `[...]`, `**`; a pattern without `/` matches the file name at any depth."""

from __future__ import annotations

import re
from functools import lru_cache


def glob_problem(pattern: str) -> str | None:
    """Why `pattern` is not a usable project glob, or None."""
    if not pattern.strip():
        return "an empty glob matches nothing"
    if pattern.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", pattern):
        return f"glob {pattern!r} is absolute; write it relative to the project root"
    if ".." in pattern.split("/"):
        return f"glob {pattern!r} leaves the project ('..')"
    try:
        compile_glob(pattern)
    except re.error as exc:
        return f"glob {pattern!r} is malformed: {exc}"
    return None


@lru_cache(maxsize=512)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """The regex for a project-relative glob (paths use forward slashes)."""
    anchored = "/" in pattern.rstrip("/")
    pattern = pattern[2:] if pattern.startswith("./") else pattern
    body = _translate(pattern)
    prefix = "" if anchored else "(?:.*/)?"
    return re.compile(f"^{prefix}{body}$")


def _translate(pattern: str) -> str:
    out: list[str] = []
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if pattern.startswith("**/", index):
            out.append("(?:[^/]*/)*")
            index += 3
        elif pattern.startswith("**", index):
            out.append(".*")
            index += 2
        elif char == "*":
            out.append("[^/]*")
            index += 1
        elif char == "?":
            out.append("[^/]")
            index += 1
        elif char == "[":
            end = pattern.find("]", index + 2)
            if end == -1:
                raise re.error("unterminated character class '['")
            inner = pattern[index + 1 : end]
            if inner.startswith("!"):
                inner = "^" + inner[1:]
            out.append(f"[{inner.replace(chr(92), chr(92) * 2)}]")
            index = end + 1
        else:
            out.append(re.escape(char))
            index += 1
    return "".join(out)


def matches(path: str, patterns: tuple[str, ...] | list[str]) -> bool:
    """Whether a project-relative posix path matches any of the globs."""
    return any(compile_glob(pattern).match(path) for pattern in patterns)
