"""Prompt completion: `/` commands with descriptions, `@path` fuzzy file mentions, and attaching mentioned files."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core.versioning.listing import git_project_files

MAX_CANDIDATES = 8
ATTACH_LIMIT_BYTES = 100_000
SKIPPED_DIRS = {".git", ".agent", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache"}
MENTION_RE = re.compile(r"(?<![\w@])@([\w./~+-]+)")
ATTACHMENT_RE = re.compile(r'\n*<attached-file path="([^"]+)" lines="(\d+)">\n.*?\n</attached-file>', re.DOTALL)


@dataclass(frozen=True)
class Candidate:
    """One completion: what replaces the token being typed, and what the menu shows."""

    insert: str
    label: str
    description: str = ""


def current_token(line: str, column: int) -> tuple[int, str]:
    """The word ending at the cursor (start column, text): what a completion replaces."""
    start = column
    while start > 0 and not line[start - 1].isspace():
        start -= 1
    return start, line[start:column]


def slash_candidates(token: str, commands: dict[str, str]) -> list[Candidate]:
    """Commands starting with what follows the `/` (then those containing it), with their descriptions."""
    typed = token.removeprefix("/").lower()
    starts = [name for name in commands if name.startswith(typed)]
    contains = [name for name in commands if typed in name and name not in starts]
    return [Candidate(f"/{name} ", f"/{name}", commands[name]) for name in sorted(starts) + sorted(contains)][:MAX_CANDIDATES]


def fuzzy_score(query: str, path: str) -> float | None:
    """Higher is better; None when `query`'s characters do not appear in order in `path` (case-insensitive)."""
    query, lowered = query.lower(), path.lower()
    if not query:
        return 0.0
    name_start = lowered.rfind("/") + 1
    score, position, previous = 0.0, 0, -2
    for char in query:
        found = lowered.find(char, position)
        if found < 0:
            return None
        score += 3.0 if found == previous + 1 else 1.0  # runs of consecutive characters
        score += 2.0 if found >= name_start else 0.0    # matches in the file name beat matches in folders
        score += 1.0 if found == 0 or lowered[found - 1] in "/_-." else 0.0
        score += 2.0 if found == name_start else 0.0
        previous, position = found, found + 1
    return score - len(path) * 0.05


def path_score(query: str, path: str) -> float | None:
    """The better of matching the whole path and matching the file name alone (which earns a bonus)."""
    whole = fuzzy_score(query, path)
    name = fuzzy_score(query, path.rsplit("/", 1)[-1])
    if name is not None:
        name += 10.0 - len(path) * 0.05
    candidates = [score for score in (whole, name) if score is not None]
    return max(candidates) if candidates else None


def file_candidates(token: str, files: list[str]) -> list[Candidate]:
    """Project files matching what follows the `@`, best first."""
    query = token.removeprefix("@")
    scored = [(score, path) for path in files if (score := path_score(query, path)) is not None]
    scored.sort(key=lambda item: (-item[0], item[1]))
    return [Candidate(f"@{path} ", f"@{path}", "attach this file") for _score, path in scored[:MAX_CANDIDATES]]


def project_files(root: Path, limit: int = 20_000) -> list[str]:
    """The project's files (git's view when it is a repository: tracked and untracked, not ignored), `.agent/` left out."""
    listed = git_project_files(root)
    if listed is not None:
        return sorted({name for name in listed if not name.startswith(".agent/")})[:limit]
    found: list[str] = []
    for folder, dirs, names in os.walk(root):
        dirs[:] = sorted(name for name in dirs if name not in SKIPPED_DIRS)
        found.extend(Path(folder, name).relative_to(root).as_posix() for name in sorted(names))
        if len(found) >= limit:
            break
    return found[:limit]


def attach_mentions(prompt: str, root: Path) -> tuple[str, list[str], list[str]]:
    """The prompt with each `@path` file's text appended; (prompt, attached paths, problems to tell the person)."""
    attached: list[str] = []
    problems: list[str] = []
    blocks: list[str] = []
    resolved_root = root.resolve()
    for mention in dict.fromkeys(MENTION_RE.findall(prompt)):
        rel = mention.rstrip(".,;:!?)")
        path = (root / rel).resolve()
        if not path.is_relative_to(resolved_root):
            problems.append(f"@{rel}: outside the project, not attached")
            continue
        if not path.is_file():
            continue  # an @handle or a word, not a file
        data = path.read_bytes()
        why = "binary" if b"\0" in data else f"larger than {ATTACH_LIMIT_BYTES // 1000} KB" if len(data) > ATTACH_LIMIT_BYTES else ""
        if why:
            problems.append(f"@{rel}: {why}, not attached (the agent can read it with its tools)")
            continue
        content = data.decode("utf-8", "replace").rstrip("\n")
        blocks.append(f'<attached-file path="{rel}" lines="{content.count(chr(10)) + 1}">\n{content}\n</attached-file>')
        attached.append(rel)
    return (prompt + "".join(f"\n\n{block}" for block in blocks), attached, problems)


def split_attachments(sent: str) -> tuple[str, list[str]]:
    """A sent prompt as the person typed it (the attached files' blocks taken out), and the paths it attached."""
    return ATTACHMENT_RE.sub("", sent), [match.group(1) for match in ATTACHMENT_RE.finditer(sent)]


def attachment_note(paths: list[str]) -> str:
    return "Attached: " + ", ".join(paths)


def shown_prompt(prompt: str) -> str:
    """A sent prompt as the conversation shows it: each attached file as one line."""
    return ATTACHMENT_RE.sub(lambda match: f"\n📎 {match.group(1)} ({match.group(2)} lines)", prompt)
