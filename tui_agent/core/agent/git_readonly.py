"""Git commands that only read (`git status`, `git log`, `git diff`…): run_shell runs them without asking, with the
whole project read-only (bubblewrap), so nothing they or the configuration they read start can change a file."""

from __future__ import annotations

import shlex

READ_ONLY_SUBCOMMANDS = frozenset({
    "status", "log", "diff", "show", "blame", "shortlog", "describe", "rev-parse", "ls-files", "ls-tree",
    "cat-file", "grep", "reflog", "whatchanged",
})
BRANCH_LISTING = frozenset({"-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--list", "--show-current",
                            "--no-color", "--merged", "--no-merged", "--contains"})
SHELL_SYNTAX = set(";&|<>()$`\\\n\r")
"""Characters that make a command more than one simple command (or redirect, substitute, escape)."""
REFUSED_ARGUMENTS = ("--output", "-O", "--open-files-in-pager", "--ext-diff", "--exec", "--paginate")


def read_only_git(command: str) -> bool:
    """True for one simple `git SUBCOMMAND ARGS…` whose subcommand only reads, with no global option (`-c`, `-C`,
    `--git-dir`: they change what git runs or where) and no argument that writes a file or starts a program."""
    if not command.strip() or SHELL_SYNTAX & set(command):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        return False
    if len(words) < 2 or words[0] != "git":
        return False
    subcommand, arguments = words[1], words[2:]
    if any(argument.startswith(REFUSED_ARGUMENTS) for argument in arguments):
        return False
    if subcommand == "branch":
        return all(argument in BRANCH_LISTING for argument in arguments)
    if subcommand == "reflog" and arguments and arguments[0] in ("expire", "delete"):
        return False
    return subcommand in READ_ONLY_SUBCOMMANDS
