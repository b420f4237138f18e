"""Project path globs in gitignore's dialect, matched by pathspec: recipe triggers, DEPENDS_ON and protected paths.

`*` and `?` stay within one folder, `**` spans any depth, `[...]` is a class (`[!...]` its complement); a pattern
without a `/` (but at its end) matches a name at any depth, one with a `/` is anchored at the project root (`./x` and
`/x` too); a pattern matching a folder covers everything in it; `!pattern` takes matches back out."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # pathspec loads with the first glob matched, not with every module that may match one
    import pathspec

NEVER_WALKED = (".git",)
GLOB_CHARS = re.compile(r"[*?\[\\!]")


def normalised(pattern: str) -> str:
    """The pattern as pathspec reads it: surrounding spaces dropped, `./x` anchored like `/x`."""
    pattern = pattern.strip()
    return "/" + pattern[2:] if pattern.startswith("./") else pattern


def glob_problem(pattern: str) -> str | None:
    """Why `pattern` is not a usable project glob (empty, absolute, leaving the project, malformed), or None."""
    if pattern.startswith("/") or re.match(r"^[A-Za-z]:[\\/]", pattern):
        return f"glob {pattern!r} is absolute; write it relative to the project root"
    return _malformed(pattern)


def _malformed(pattern: str) -> str | None:
    if not pattern.strip():
        return "an empty glob matches nothing"
    if ".." in pattern.split("/"):
        return f"glob {pattern!r} leaves the project ('..')"
    if re.search(r"\[[^\]]*$", pattern):
        return f"glob {pattern!r} is malformed: '[' without a closing ']' matches nothing"
    import pathspec

    try:
        pathspec.GitIgnoreSpec.from_lines([normalised(pattern)])
    except ValueError as exc:
        return f"glob {pattern!r} is malformed: {exc}"
    return None


@lru_cache(maxsize=256)
def compiled(patterns: tuple[str, ...]) -> pathspec.GitIgnoreSpec:
    """The spec of the well-formed patterns (a malformed one matches nothing rather than disabling the others)."""
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines([normalised(p) for p in patterns if _malformed(p) is None])


def matches(path: str, patterns: tuple[str, ...] | list[str]) -> bool:
    """Whether a project-relative POSIX path matches the globs."""
    return bool(patterns) and compiled(tuple(patterns)).match_file(path)


def rooted(pattern: str) -> str:
    """The pattern anchored at the project root whatever its shape (`*.json`: the root's JSON files only)."""
    pattern = normalised(pattern)
    return pattern if pattern.startswith(("/", "!")) else "/" + pattern


def matching_paths(root: Path, patterns: tuple[str, ...] | list[str], *, files_only: bool = False,
                   limit: int | None = None) -> list[str]:
    """Existing project paths (relative, POSIX, sorted) the globs match, outside `.git`: a matching folder is listed
    itself rather than its contents, unless `files_only`. Links are listed as they are, never followed."""
    if not patterns:
        return []
    spec = compiled(tuple(patterns))
    found: list[str] = []
    depth = _depth_limit(patterns)
    for start in _starts(root, patterns) if spec.patterns else []:
        for path in _walk(root, start, spec, files_only, depth):
            found.append(path)
            if limit is not None and len(found) >= limit:
                return sorted(found)
    return sorted(found)


def _walk(root: Path, start: str, spec: pathspec.GitIgnoreSpec, files_only: bool, depth: int | None) -> Iterator[str]:
    covered: set[str] = set()  # folders in a matching folder: walked whatever the depth, since all they hold matches
    for folder, subfolders, files in os.walk(root / start):
        relative = Path(folder).relative_to(root).as_posix()
        prefix = "" if relative == "." else relative + "/"
        links = {name for name in subfolders if os.path.islink(os.path.join(folder, name))}
        yield from (prefix + name for name in sorted(files) if spec.match_file(prefix + name))
        if not files_only:
            yield from (prefix + name for name in sorted(links) if spec.match_file(prefix + name))
        kept = []
        for name in sorted(set(subfolders) - links):
            path = prefix + name
            if path in NEVER_WALKED:
                continue
            if spec.match_file(path + "/") or relative in covered:
                if not files_only:
                    yield path
                    continue
                covered.add(path)
            if path in covered or depth is None or path.count("/") + 1 < depth:
                kept.append(name)
        subfolders[:] = kept


def _depth_limit(patterns: tuple[str, ...] | list[str]) -> int | None:
    """How many folders deep a match can be, when every pattern is anchored and free of `**` (else None)."""
    deepest = 0
    for pattern in (normalised(p) for p in patterns if _malformed(p) is None):
        if pattern.startswith("!") or "**" in pattern or "/" not in pattern.rstrip("/"):
            return None
        deepest = max(deepest, len(pattern.strip("/").split("/")))
    return deepest


def _starts(root: Path, patterns: tuple[str, ...] | list[str]) -> list[str]:
    """The folders a walk must cover: each anchored pattern's literal leading folders, else the whole project."""
    starts: set[str] = set()
    for pattern in (normalised(p) for p in patterns if _malformed(p) is None):
        anchored = "/" in pattern.rstrip("/")
        literal = _literal_prefix(pattern.strip("/").split("/")[:-1]) if anchored and not pattern.startswith("!") else []
        if not literal:
            return [""]
        if all((root / "/".join(literal[:depth])).is_dir() and not (root / "/".join(literal[:depth])).is_symlink()
               for depth in range(1, len(literal) + 1)):
            starts.add("/".join(literal))
    return _outermost(starts)


def _literal_prefix(folders: list[str]) -> list[str]:
    prefix = []
    for part in folders:
        if GLOB_CHARS.search(part):
            break
        prefix.append(part)
    return prefix


def _outermost(starts: set[str]) -> list[str]:
    ordered = sorted(starts)
    return [s for s in ordered if not any(s.startswith(other + "/") for other in ordered if other != s)]
