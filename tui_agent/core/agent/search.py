"""Project search with ripgrep's semantics: `rg` when installed, else the pathspec walk; tuiagent's own state never shown.

Both paths honour .gitignore, .ignore and .git/info/exclude, search hidden files, skip `.git/`, never follow symlinks,
and leave out `.agent/` bookkeeping (sessions, runs, cache, quarantine, state.db) while `.agent/tools` and
`.agent/recipes` stay searchable. Set TUIAGENT_SEARCH=fallback to force the walk (the tests run both).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
from dataclasses import dataclass, field
from typing import NamedTuple
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.agent.search_walk import FILE_TYPES, glob_spec, type_spec, walk_files
from tui_agent.core.errors import TuiAgentError

AGENT_STATE_GLOBS = ("!.agent/sessions/", "!.agent/runs/", "!.agent/cache/", "!.agent/quarantine/", "!.agent/state.db*")
MAX_OUTPUT_BYTES = 16_000_000  # rg is stopped past this; the answer says the search was cut
MAX_LINE_CHARS = 500
MAX_FILE_BYTES = 20_000_000  # the fallback skips larger files (rg reads them; a model rarely wants them)
TIMEOUT_S = 60.0


class SearchError(TuiAgentError):
    """The search could not run (a bad regex, an unknown file type); the message is for the model."""


@dataclass(frozen=True)
class GrepQuery:
    """One grep: `path` is project-relative ("." for all); `globs` are rg-style (`*.py`, `!tests/**`)."""

    pattern: str
    path: str = "."
    globs: tuple[str, ...] = ()
    file_type: str | None = None
    ignore_case: bool = False
    before: int = 0
    after: int = 0
    mode: str = "content"  # content | files_with_matches | count
    multiline: bool = False


class Hit(NamedTuple):
    """One output line of content mode as rg prints it after the file name: `12:text` for a match, `12-text` for a
    context line, "" for a `--` group break. Parsed only when shown (a search may find 100,000 lines)."""

    path: str
    raw: str

    @property
    def is_break(self) -> bool:
        return not self.raw

    def shown(self) -> str:
        if not self.raw:
            return "--"
        match = _LINE.match(self.raw)
        if match is None:
            return f"{self.path}: {self.raw}"
        mark = match.group(2)
        return f"{self.path}{mark}{match.group(1)}{mark} {self.raw[match.end():]}"


_LINE = re.compile(r"(\d+)([:-])")


@dataclass
class SearchResult:
    """What a search found, in rg's terms; `cut` is set when the output grew past MAX_OUTPUT_BYTES."""

    hits: list[Hit]
    files: list[str]
    counts: dict[str, int]
    cut: bool = False
    engine: str = "rg"
    notes: list[str] = field(default_factory=list)
    """Why something was left out: each ignore file linked out of the project (search_links), not read."""


def ripgrep() -> str | None:
    if os.environ.get("TUIAGENT_SEARCH") == "fallback":
        return None
    return shutil.which("rg")


async def _engine(root: Path, path: str) -> tuple[str | None, list[str]]:
    """`rg`, or None for the walk: the walk when `rg` is missing or an ignore file `rg` would read leads out of the
    project through a link (or the folder could not be looked through); and the messages naming those links."""
    from tui_agent.core.agent.search_links import linked_ignore_files

    linked = await asyncio.to_thread(linked_ignore_files, root, path)
    rg = ripgrep()
    return (rg if linked == [] else None), (linked or [])


def is_agent_state(relative: str) -> bool:
    parts = relative.split("/")
    return len(parts) > 1 and parts[0] == ".agent" and (parts[1] in ("sessions", "runs", "cache", "quarantine") or parts[1].startswith("state.db"))


def _rg_base(globs: tuple[str, ...]) -> list[str]:
    args = ["--no-config", "--hidden", "--no-require-git", "--color", "never", "--null"]
    for glob in (*globs, "!.git", *AGENT_STATE_GLOBS):  # the last matching glob wins: ours come last
        args += ["-g", glob]
    return args


async def _run_rg(rg: str, root: Path, args: list[str]) -> tuple[bytes, bytes, int, bool]:
    process = await asyncio.create_subprocess_exec(rg, *args, cwd=root, stdin=asyncio.subprocess.DEVNULL,
                                                   stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    chunks: list[bytes] = []
    size, cut = 0, False

    async def read_all() -> None:
        nonlocal size, cut
        assert process.stdout is not None
        while chunk := await process.stdout.read(1 << 16):
            chunks.append(chunk)
            size += len(chunk)
            if size > MAX_OUTPUT_BYTES:
                cut = True
                process.kill()
                return

    try:
        stderr_task = asyncio.ensure_future(process.stderr.read())
        await asyncio.wait_for(read_all(), TIMEOUT_S)
        code = await process.wait()
        stderr = await stderr_task
    except (asyncio.TimeoutError, asyncio.CancelledError):
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()
        raise
    return b"".join(chunks), stderr, code, cut


def _rg_failure(stderr: bytes) -> str:
    text = stderr.decode("utf-8", errors="replace").strip()
    lines = [line for line in text.splitlines() if line.strip() and "Permission denied" not in line and "No such file" not in line]
    return "\n".join(lines[-12:])


async def grep(root: Path, query: GrepQuery) -> SearchResult:
    if query.file_type is not None and query.file_type not in FILE_TYPES:
        raise SearchError(f"unknown file type {query.file_type!r}; known types: {', '.join(sorted(FILE_TYPES))} (or use `glob`)")
    rg, notes = await _engine(root, query.path)
    if rg is None:
        found = _grep_fallback(root, query)
        found.notes = notes
        return found
    args = [*_rg_base(query.globs), "--no-heading", "--with-filename", "--max-columns", str(MAX_LINE_CHARS), "--max-columns-preview"]
    if query.ignore_case:
        args.append("-i")
    if query.multiline:
        args += ["-U", "--multiline-dotall"]
    if query.file_type:
        args += ["-t", query.file_type]
    if query.mode == "files_with_matches":
        args.append("-l")
    elif query.mode == "count":
        args.append("-c")
    else:
        args += ["-n", "-B", str(query.before), "-A", str(query.after)]
    out, err, code, cut = await _run_rg(rg, root, [*args, "-e", query.pattern, "--", query.path])
    if code == 2 and not out:
        raise SearchError(_rg_failure(err) or "rg failed")
    return _parse_rg(out, query.mode, cut)


def _parse_rg(out: bytes, mode: str, cut: bool) -> SearchResult:
    text = out.decode("utf-8", errors="replace")
    result = SearchResult([], [], {}, cut=cut)
    if mode == "files_with_matches":
        names = [_clean(name) for name in text.split("\0") if name]
        result.files = [name for name in names if not is_agent_state(name)]
        return result
    hits = result.hits
    for raw in text.splitlines():
        name, null, rest = raw.partition("\0")
        if not null:
            if raw == "--" and hits:
                hits.append(Hit(hits[-1].path, ""))
            continue
        if name.startswith("./"):
            name = name[2:]
        if name.startswith(".agent/") and is_agent_state(name):
            continue
        if mode == "count":
            result.counts[name] = int(rest) if rest.isdigit() else 0
        else:
            hits.append(Hit(name, rest))
    return result


def _clean(name: str) -> str:
    return name[2:] if name.startswith("./") else name


def _grep_fallback(root: Path, query: GrepQuery) -> SearchResult:
    flags = (re.IGNORECASE if query.ignore_case else 0) | (re.MULTILINE | re.DOTALL if query.multiline else 0)
    try:
        regex = re.compile(query.pattern, flags)
    except re.error as error:
        raise SearchError(f"invalid regular expression: {error}") from None
    result = SearchResult([], [], {}, engine="fallback")
    size = 0
    for name in candidate_files(root, query.path, query.globs, query.file_type):
        try:
            data = projectfs.read_bytes(root / name) if os.lstat(root / name).st_size <= MAX_FILE_BYTES else b""
        except OSError:
            continue
        if not data or b"\x00" in data[:8192]:
            continue
        text = data.decode("utf-8", errors="replace")
        matched = _matching_lines(regex, text, query.multiline)
        if not matched:
            continue
        if query.mode == "files_with_matches":
            result.files.append(name)
        elif query.mode == "count":
            result.counts[name] = len(matched)
        else:
            lines = text.splitlines()
            result.hits.extend(_with_context(name, lines, matched, query.before, query.after, bool(result.hits)))
            size += sum(len(hit.raw) for hit in result.hits[-len(matched):])
            if size > MAX_OUTPUT_BYTES:
                result.cut = True
                break
    return result


def _matching_lines(regex: re.Pattern[str], text: str, multiline: bool) -> list[int]:
    """0-based numbers of the lines a match touches (rg -U prints every line of a multi-line match)."""
    if not multiline:
        return [number for number, line in enumerate(text.splitlines()) if regex.search(line)]
    found: set[int] = set()
    for match in regex.finditer(text):
        first = text.count("\n", 0, match.start())
        last = text.count("\n", 0, max(match.start(), match.end() - 1))
        found.update(range(first, last + 1))
    return sorted(found)


def _with_context(name: str, lines: list[str], matched: list[int], before: int, after: int, separate: bool) -> list[Hit]:
    hits: list[Hit] = []
    wanted = set(matched)
    shown = sorted({n for m in matched for n in range(max(0, m - before), min(len(lines), m + after + 1))})
    previous = None
    for number in shown:
        if (before or after) and (previous is not None and number != previous + 1 or previous is None and separate):
            hits.append(Hit(name, ""))
        text = lines[number]
        if len(text) > MAX_LINE_CHARS:
            text = text[:MAX_LINE_CHARS] + " [... omitted end of long line]"
        hits.append(Hit(name, f"{number + 1}{':' if number in wanted else '-'}{text}"))
        previous = number
    return hits


def candidate_files(root: Path, path: str, globs: tuple[str, ...], file_type: str | None) -> list[str]:
    """The fallback's files: under `path`, not ignored, matching the globs and the type (as rg filters them)."""
    include, exclude = glob_spec([*AGENT_STATE_GLOBS, *globs])
    types = type_spec(file_type) if file_type else None
    start = "" if path in ("", ".") else path.strip("/")
    if start and (root / start).is_file():
        names = [start]
    else:
        names = list(walk_files(root, start, exclude, include))
    chosen = []
    for name in names:
        if is_agent_state(name):
            continue
        if include.patterns and not include.match_file(name):
            continue
        if types is not None and not types.match_file(name):
            continue
        chosen.append(name)
    return chosen


async def list_files(root: Path, path: str, globs: tuple[str, ...]) -> tuple[list[str], str, list[str]]:
    """Project-relative files under `path` matching the globs, newest modification first, the engine, and notes (an
    ignore file linked out of the project, not read). Unlike grep's `glob`, the pattern only filters: an ignored file
    stays out even when the pattern names it."""
    rg, notes = await _engine(root, path)
    if rg is None:
        names, engine = candidate_files(root, path, (), None), "fallback"
    else:
        out, err, code, _ = await _run_rg(rg, root, [*_rg_base(()), "--files", "--", path])
        if code == 2 and not out:
            raise SearchError(_rg_failure(err) or "rg failed")
        names = [_clean(name) for name in out.decode("utf-8", errors="replace").split("\0") if name]
        names, engine = [name for name in names if not is_agent_state(name)], "rg"
    include, exclude = glob_spec(list(globs))
    names = [name for name in names if (not include.patterns or include.match_file(name)) and not exclude.match_file(name)]
    return by_mtime(root, names), engine, notes


def by_mtime(root: Path, names: list[str]) -> list[str]:
    """Newest first (ties by name, so the order is stable)."""
    base = str(root).rstrip("/") + "/"

    def key(name: str) -> tuple[int, str]:
        try:
            return (-os.lstat(base + name).st_mtime_ns, name)
        except OSError:
            return (0, name)
    return sorted(names, key=key)
