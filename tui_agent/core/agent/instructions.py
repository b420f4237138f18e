"""Project instructions (AGENTS.md, CLAUDE.md, the person's own) and the environment block, read once per session.

Both go into the system prompt, which is frozen for the whole conversation (frozen_prefix): an edit to AGENTS.md is
picked up by the next session, and nothing here changes a byte of a running conversation's cached prefix.
"""

from __future__ import annotations

import datetime
import functools
import os
import platform
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.core.agent.paths import PathRefused, confine

if TYPE_CHECKING:
    from tui_agent.core.versioning.snapshot import RepoSnapshot

PROJECT_FILES = ("AGENTS.md", "CLAUDE.md")
MAX_FILE_CHARS = 40_000
PERSONAL_NAME = "AGENTS.md"

INIT_PROMPT = """\
Please analyse this repository and write an AGENTS.md file at its root: the instructions a coding agent (you, in a
later session) should read first. Explore with list_files, grep and read_file (README, build and CI files, the
package layout, a few representative modules and tests) before writing. Keep it short and specific to this project:
- the commands to build, lint, type-check and run the tests (a single test too);
- the layout: where the code, the tests and the docs live, and the main modules' jobs;
- the conventions a newcomer would get wrong (style, naming, error handling, how changes are committed);
- anything surprising (generated files not to edit, slow or flaky tests, required services).
Do not repeat what any README says at length, and do not invent commands you did not find. If AGENTS.md (or
CLAUDE.md) already exists, improve it rather than starting over: read it first and keep what is still right.
Write the file with write_file (or edit_file), then say in two lines what you put in it."""


def init_prompt(extra: str = "") -> str:
    """The `/init` prompt; `extra` is what the person typed after /init (a focus, a wish)."""
    return INIT_PROMPT + (f"\n\nThe person adds: {extra.strip()}" if extra.strip() else "")


def unread_instructions(root: Path) -> list[str]:
    """The project's instruction files that exist (what a restricted session leaves out of the prompt)."""
    found = []
    for name in PROJECT_FILES:
        try:
            if confine(root, name).is_file():  # a symlink out of the project is not an instruction file
                found.append(name)
        except PathRefused:
            continue
    return found


def refused_instructions(root: Path) -> list[str]:
    """One line per instruction file that is a link leading out of the project (never read; said, not skipped)."""
    refused = []
    for name in PROJECT_FILES:
        if not (root / name).is_symlink():
            continue
        try:
            confine(root, name)
        except PathRefused as why:
            refused.append(f"{name} is not given to the model as instructions: {why}")
    return refused


def config_folder() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tuiagent"


def _read_limited(path: Path) -> str | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    text = data.decode("utf-8", errors="replace").strip()
    if len(text) > MAX_FILE_CHARS:
        text = text[:MAX_FILE_CHARS] + f"\n[... cut: the file has {len(data)} bytes; only the first {MAX_FILE_CHARS} characters are read]"
    return text or None


def project_instructions(root: Path, *, trusted: bool = True) -> str:
    """The instruction files as one text for the system prompt ("" when there are none). A project file is read only
    when it is a regular file inside the project (a symlink out of it, e.g. to a key file, is not followed), and only
    in a trusted project: a cloned repository's AGENTS.md is whoever pushed it, speaking as the project's owner."""
    parts: list[str] = []
    personal = _read_limited(config_folder() / PERSONAL_NAME)
    if personal:
        parts.append(f"The person's own instructions (their {PERSONAL_NAME} in {config_folder()}), for every project:\n{personal}")
    seen: set[str] = set()
    for name in PROJECT_FILES if trusted else ():
        try:
            real = confine(root, name)
        except PathRefused:
            continue
        if not real.is_file():
            continue
        text = _read_limited(real)
        if text and text not in seen:
            seen.add(text)
            parts.append(f"The project's instructions ({name} at the project root):\n{text}")
    if not parts:
        return ""
    return ("# Instructions for this project\nFollow these instructions; where they conflict, the project's files "
            "win over the person's own, and the person's words in the conversation win over both.\n\n" + "\n\n".join(parts))


@dataclass(frozen=True)
class Environment:
    """What the model should know about where it runs, captured once when the session starts."""

    date: str
    platform: str
    cwd: str
    is_repo: bool
    branch: str
    status: tuple[str, ...]
    more_changes: int
    recent: tuple[str, ...]

    @classmethod
    def capture(cls, root: Path) -> "Environment":
        from tui_agent.core.versioning.snapshot import snapshot

        early = _EARLY_GLANCES.pop(str(root), None)
        if early is not None:
            early[0].join()
        glance = early[1][0] if early is not None and early[1] else snapshot(root)
        return cls(datetime.date.today().isoformat(), system_line(), str(root), glance.is_repo, glance.branch,
                   tuple(glance.status), glance.more_changes, tuple(glance.recent))

    def text(self) -> str:
        lines = ["# Environment (captured when this session started; it is not updated)",
                 f"- Date: {self.date}", f"- Platform: {self.platform}", f"- Working directory: {self.cwd}"]
        if not self.is_repo:
            lines.append("- Not a git repository")
            return "\n".join(lines)
        lines.append(f"- Git branch: {self.branch or '(none yet)'}")
        if self.status:
            lines.append("- Git status (short; .agent/ left out):")
            lines += [f"    {line}" for line in self.status]
            if self.more_changes:
                lines.append(f"    ... and {self.more_changes} more changed files")
        else:
            lines.append("- Git status: clean")
        if self.recent:
            lines.append("- Recent commits:")
            lines += [f"    {line}" for line in self.recent]
        return "\n".join(lines)


_EARLY_GLANCES: dict[str, tuple[threading.Thread, list["RepoSnapshot"]]] = {}


def glance_early(root: Path) -> None:
    """Start the repository glance of `root`'s environment block (`git status`, `git log`) in a thread now (headless:
    while the SDK imports; a turn: while undo checkpoints the work tree): the next `Environment.capture` takes it
    instead of running git when the request is built. Nothing when one is already on its way."""
    from tui_agent.core.versioning.snapshot import snapshot

    if str(root) in _EARLY_GLANCES:
        return
    found: list[RepoSnapshot] = []
    thread = threading.Thread(target=lambda: found.append(snapshot(root)), name="repo-glance", daemon=True)
    _EARLY_GLANCES[str(root)] = (thread, found)
    thread.start()


def drop_early_glance(root: Path) -> None:
    """Forget a glance no request took (a turn cancelled before its request): the next capture runs git afresh."""
    _EARLY_GLANCES.pop(str(root), None)


@functools.cache
def system_line() -> str:
    """The operating system and Python, e.g. `linux (Linux-6.1-x86_64-with-glibc2.36, Python 3.11.7)`. The first call
    runs `uname -p` (tens of ms): `open_runtime` makes it in a thread while the SDK imports, off the first request's way."""
    return f"{platform.system().lower()} ({platform.platform(terse=True)}, Python {platform.python_version()})"
