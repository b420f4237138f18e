"""The repository's command-running git configuration, read without running anything (`git config --list --includes`),
with the value that neutralises each key (what the git door passes on the command line)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core.errors import TuiAgentError

HOSTILE_SCOPES = frozenset({"local", "worktree"})
"""Repository config (and every file it includes): it came with the project. System and global config are the person's."""

LISTED_ONLY = "(listed)"
"""Marks a key shown to the person that needs no override (git ignores it in repository config, or it only pulls in
other keys, which are neutralised one by one)."""

_PLAIN: dict[str, str] = {
    "core.fsmonitor": "false", "core.pager": "cat", "core.editor": ":", "sequence.editor": ":", "core.askpass": "",
    "core.sshcommand": "ssh", "core.gitproxy": "", "core.alternaterefscommand": "", "diff.external": "",
    "gpg.program": "gpg", "credential.helper": "", "man.viewer": "man", "web.browser": "",
    "uploadpack.packobjectshook": LISTED_ONLY, "core.worktree": LISTED_ONLY, "include.path": LISTED_ONLY,
    "core.hookspath": LISTED_ONLY,  # the door's fixed core.hooksPath (an empty folder) overrides it
}
_SUBSECTION: dict[tuple[str, str], str] = {
    ("filter", "clean"): "", ("filter", "smudge"): "", ("filter", "process"): "", ("filter", "required"): "false",
    ("diff", "textconv"): "cat", ("diff", "command"): "", ("merge", "driver"): "false",
    ("credential", "helper"): "", ("remote", "uploadpack"): "git-upload-pack",
    ("remote", "receivepack"): "git-receive-pack", ("difftool", "cmd"): "false", ("mergetool", "cmd"): "false",
    ("browser", "cmd"): "false", ("man", "cmd"): "false", ("includeif", "path"): LISTED_ONLY,
    ("gpg", "program"): "gpg", ("gpg", "defaultkeycommand"): "",
}
_GPG_PROGRAMS = {"openpgp": "gpg", "x509": "gpgsm", "ssh": "ssh-keygen"}
_NO_FALLBACK = ("credential.", "core.fsmonitor")
"""Kept neutral even when the person's own config sets them: credential helpers are multi-valued (an empty value resets
the list) and never needed; the door turns every fsmonitor off."""


@dataclass(frozen=True)
class ConfigEntry:
    """One `key = value` git reads, with its scope and the file it came from."""

    scope: str
    origin: str
    key: str
    value: str | None


@dataclass(frozen=True)
class CommandEntry:
    """A command-running key set by repository config: what it says, where, and the value that neutralises it."""

    key: str
    value: str
    origin: str
    neutral: str

    @property
    def digest(self) -> str:
        return hashlib.sha256(json.dumps([self.key, self.value, self.origin]).encode()).hexdigest()

    def text(self) -> str:
        shown = "".join(char if char.isprintable() else "?" for char in self.value)[:200]
        return f"{self.key} = {shown} (from {self.origin})"


class GitConfigError(TuiAgentError, RuntimeError):
    """Git cannot read the repository's configuration; the message is one line saying where and why."""


def neutral_value(key: str, value: str | None) -> str | None:
    """The override that stops `key` from running a command, LISTED_ONLY, or None when it runs nothing."""
    lowered = key.lower()
    if lowered in _PLAIN:
        return _PLAIN[lowered]
    section, _, rest = key.partition(".")
    subsection, _, name = rest.rpartition(".")
    section, name = section.lower(), name.lower()
    if section == "pager":
        return "false"
    if section == "trace2":
        return LISTED_ONLY
    if section == "submodule" and name == "update" and (value or "").startswith("!"):
        return "none"
    if not subsection:
        return None
    if section == "gpg" and name == "program":
        return _GPG_PROGRAMS.get(subsection.lower(), "gpg")
    return _SUBSECTION.get((section, name))


def parse_listing(raw: bytes) -> list[ConfigEntry]:
    """Entries of `git config --list -z --show-scope --show-origin` output (`scope\\0origin\\0key\\nvalue\\0`)."""
    fields = raw.decode("utf-8", errors="surrogateescape").split("\0")
    entries = []
    for start in range(0, len(fields) - 2, 3):
        scope, origin, pair = fields[start:start + 3]
        key, newline, value = pair.partition("\n")
        entries.append(ConfigEntry(scope, origin.removeprefix("file:"), key, value if newline else None))
    return entries


def read_config(cwd: Path, env: dict[str, str], timeout_s: float) -> list[ConfigEntry]:
    """Every config entry git would read in `cwd`, includes followed (reading config runs nothing)."""
    try:
        done = subprocess.run(["git", "config", "--list", "--includes", "-z", "--show-scope", "--show-origin"],
                              cwd=cwd, env=env, capture_output=True, timeout=timeout_s)
    except subprocess.TimeoutExpired:
        raise GitConfigError(f"git did not read the configuration of {cwd} within {timeout_s:g} s "
                             "(an include of a file that never ends?)") from None
    except OSError as error:
        raise GitConfigError(f"git could not run in {cwd}: {error}") from None
    if done.returncode != 0:
        message = next((line for line in done.stderr.decode(errors="replace").splitlines() if line.strip()), "")
        raise GitConfigError(f"git cannot read the configuration of the repository at {cwd}: "
                             f"{message.removeprefix('fatal: ') or f'exit {done.returncode}'}")
    return parse_listing(done.stdout)


def command_entries(entries: list[ConfigEntry], work_tree: Path) -> list[CommandEntry]:
    """The command-running keys repository config sets, each with its override (the person's own value for the
    key when their global or system config has one, else a neutral one). Origins inside `work_tree` are shown
    relative to it."""
    theirs: dict[str, str] = {}
    for entry in entries:
        if entry.scope in ("system", "global") and entry.value is not None:
            theirs[entry.key.lower()] = entry.value
    found: list[CommandEntry] = []
    for entry in entries:
        if entry.scope not in HOSTILE_SCOPES:
            continue
        neutral = neutral_value(entry.key, entry.value)
        if neutral is None:
            continue
        if neutral != LISTED_ONLY and not entry.key.lower().startswith(_NO_FALLBACK):
            neutral = theirs.get(entry.key.lower(), neutral)
        value = entry.value if entry.value is not None else ""
        found.append(CommandEntry(entry.key, value, shown_origin(entry.origin, work_tree), neutral))
    return found


def shown_origin(origin: str, work_tree: Path) -> str:
    """A config file's path as the person reads it: relative inside the work tree, absolute elsewhere."""
    path = Path(origin) if os.path.isabs(origin) else work_tree / origin
    try:
        return Path(os.path.normpath(path)).relative_to(work_tree).as_posix()
    except ValueError:
        return os.path.normpath(path)


def overrides(found: list[CommandEntry]) -> list[tuple[str, str]]:
    """(key, value) pairs to pass as command-scope config, in order."""
    pairs = [(entry.key, entry.neutral) for entry in found if entry.neutral != LISTED_ONLY]
    filters = sorted({entry.key.rpartition(".")[0] for entry in found if entry.key.lower().startswith("filter.")})
    return pairs + [(f"{name}.required", "false") for name in filters]  # a required filter doing nothing would fail
