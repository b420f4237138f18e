"""A hostile repository for the git door's tests: every command-running git key it sets writes a canary file when run."""

from __future__ import annotations

import os
from pathlib import Path

from tests.gitrepo import git, init_repo


def canary_command(canaries: Path, name: str, tail: str = "cat") -> str:
    """A shell command that records it ran (a file `name` in `canaries`), then behaves (`tail`)."""
    return f"touch {canaries}/{name}; {tail}"


def command_keys(canaries: Path, project: Path) -> dict[str, tuple[str, str]]:
    """name -> (config key, value): each a key git documents as running a command (trace2 targets write a file)."""
    def run(name: str, tail: str = "cat") -> str:
        return canary_command(canaries, name, tail)

    def program(name: str) -> str:  # keys git runs as a program, not through the shell (written by write_programs)
        return str(program_path(canaries, name))

    return {
        "fsmonitor": ("core.fsmonitor", run("fsmonitor", "false")),
        "clean": ("filter.evil.clean", run("clean")),
        "smudge": ("filter.evil.smudge", run("smudge")),
        "process": ("filter.proc.process", run("process", "sleep 0")),
        "textconv": ("diff.evil.textconv", run("textconv")),
        "diffcommand": ("diff.evil.command", run("diffcommand", "true")),
        "external": ("diff.external", run("external", "true")),
        "pager": ("core.pager", run("pager")),
        "pagerlog": ("pager.log", run("pagerlog")),
        "editor": ("core.editor", run("editor", "true")),
        "sequence": ("sequence.editor", run("sequence", "true")),
        "gpg": ("gpg.program", program("gpg")),
        "gpgssh": ("gpg.ssh.program", program("gpgssh")),
        "ssh": ("core.sshCommand", run("ssh", "false")),
        "askpass": ("core.askPass", program("askpass")),
        "credential": ("credential.helper", f"!{run('credential', 'true')}"),
        "merge": ("merge.evil.driver", run("merge", "false")),
        "alternate": ("core.alternateRefsCommand", run("alternate", "true")),
        "trace2": ("trace2.eventTarget", str(canaries / "trace2")),
        "hookspath": ("core.hooksPath", str(project / "myhooks")),
        "gpgsign": ("commit.gpgSign", "true"),  # runs gpg.program (or gpg.ssh.program) for every commit
        "gpgformat": ("gpg.format", "ssh"),
    }


PROGRAMS = ("gpg", "gpgssh", "askpass")
"""The keys whose value is a program file rather than a shell command."""


def program_path(canaries: Path, name: str) -> Path:
    return canaries.parent / "bin" / name


def write_programs(canaries: Path) -> None:
    """The program files the PROGRAMS keys name, each recording it ran. Only `hostile_repo` calls this, with a
    temporary folder: `command_keys` itself writes nothing (a module-level call with `/c` once replaced /bin/gpg)."""
    for name in PROGRAMS:
        script = program_path(canaries, name)
        script.parent.mkdir(exist_ok=True)
        script.write_text(f"#!/bin/sh\n{canary_command(canaries, name, 'false')}\n")
        script.chmod(0o755)


EXTRAS = ("hooks",)
"""Pseudo-keys: executable hooks in .git/hooks and in the core.hooksPath folder."""


def hostile_repo(base: Path, keys: list[str] | None = None) -> tuple[Path, Path]:
    """A committed project whose `.git/config` sets `keys` (default all), with a .gitattributes naming the drivers,
    an include of a project file setting a clean filter, and executable hooks: (project, canary folder)."""
    canaries = base / "canaries"
    canaries.mkdir(parents=True, exist_ok=True)
    project = init_repo(base / "project")
    (project / ".gitattributes").write_text("*.txt filter=evil diff=evil merge=evil\n*.md filter=inc\n*.py filter=proc\n")
    (project / "notes.txt").write_text("one\n")
    git(project, "add", ".gitattributes", "notes.txt")
    git(project, "commit", "-q", "-m", "attributes")
    write_programs(canaries)
    table = command_keys(canaries, project)
    chosen = list(table) + list(EXTRAS) if keys is None else keys
    for name in chosen:
        if name in table:
            git(project, "config", *table[name])
    (project / "evil.cfg").write_text(f'[filter "inc"]\n\tclean = {canary_command(canaries, "included")}\n'
                                      f'\tsmudge = {canary_command(canaries, "included")}\n')
    git(project, "config", "include.path", "../evil.cfg")
    for folder in (project / ".git" / "hooks", project / "myhooks") if "hooks" in chosen else ():
        folder.mkdir(exist_ok=True)
        for hook in ("pre-commit", "commit-msg", "post-commit", "reference-transaction", "post-index-change",
                     "pre-auto-gc", "post-checkout"):
            path = folder / hook
            path.write_text(f"#!/bin/sh\ntouch {canaries}/hook-{hook}\n")
            path.chmod(0o755)
    (project / "notes.txt").write_text("one\ntwo\n")  # a tracked change: status and diff must look at it
    (project / "README.md").write_text("# changed\n")
    (project / "new.txt").write_text("untracked\n")
    return project, canaries


def ran(canaries: Path) -> list[str]:
    """The canaries written: the commands that ran."""
    return sorted(os.listdir(canaries))
