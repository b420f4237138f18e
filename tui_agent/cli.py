"""The `tuiagent` entry point: the TUI by default, `-p PROMPT` headless, and `tools`/`sandbox`/`recipes` subcommands."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import functools
import gc
import os
import shutil
import sys
import threading
from collections.abc import Sequence
from pathlib import Path

from tui_agent.commands import COMMAND_GROUPS
from tui_agent.commands.failures import (EXIT_BROKEN_PIPE, EXIT_FAILURE, EXIT_INTERRUPTED, EXIT_USAGE, CliParser,
                                         CommandFailure, UsageFailure, git_failure_message, is_sandbox_unavailable, os_error_message, report, silence_stdout,
                                         wants_json)
from tui_agent.core.config_error import ConfigError
from tui_agent.core.versioning.gitrunner import GitFailure


@functools.cache
def installed_version() -> str:
    """The installed distribution's version ("unknown" when run from a tree that was never installed)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tuiagent")
    except PackageNotFoundError:
        return "unknown"


class VersionAction(argparse.Action):
    """`--version`: the installed version, looked up only when asked (importlib.metadata is not free at start-up)."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS, default: str = argparse.SUPPRESS,
                 help: str = "print the version and exit") -> None:
        super().__init__(option_strings, dest, nargs=0, default=default, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        print(f"tuiagent {installed_version()}")
        parser.exit()


@functools.cache  # built once per process: argparse spends tens of ms on its ~600 help strings (gettext look-ups)
def build_parser() -> argparse.ArgumentParser:
    parser = CliParser(prog="tuiagent", description=__doc__)
    parser.add_argument("--project", default=".", help="project folder (default: the current directory)")
    parser.add_argument("--version", action=VersionAction)
    subparsers = parser.add_subparsers(dest="command")
    for group in COMMAND_GROUPS:
        group.register(parser, subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command; every failure is one line on stderr (or a JSON object on stdout with --json) and an exit code."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    as_json = wants_json(arguments)
    try:
        return dispatch(arguments, as_json)
    except BrokenPipeError:  # `tuiagent tools list --json | head -1`: the reader is gone, nothing left to say
        silence_stdout()
        return EXIT_BROKEN_PIPE


def dispatch(arguments: list[str], as_json: bool) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(arguments)
    except UsageFailure as failure:
        if not as_json:
            print(failure.usage.rstrip("\n"), file=sys.stderr)
        return report(f"{failure}", "usage", EXIT_USAGE, as_json=as_json)
    except SystemExit as done:  # --help and --version print and exit 0
        return done.code if isinstance(done.code, int) else EXIT_USAGE
    if not opens_tui(args) or getattr(args, "undo", False):
        gc.enable()  # the TUI enables it after its first frame
    handler = getattr(args, "handler", None)
    if handler is None:
        parser.print_help()
        return EXIT_USAGE
    no_git = missing_git()
    if no_git is not None:
        return report(no_git, "git", EXIT_FAILURE, as_json=as_json)
    problem = resolve_project(args)
    if problem is not None:
        return report(problem, "project", EXIT_USAGE, as_json=as_json)
    try:
        if not opens_tui(args):
            check_config(args.project)
        return int(handler(args) or 0)
    except ConfigError as error:
        return report(str(error), "config", EXIT_USAGE, as_json=as_json, file=error.path, line=error.line)
    except CommandFailure as failure:
        return report(str(failure), failure.stage, failure.code, as_json=as_json)
    except KeyboardInterrupt:
        return report("interrupted", "interrupted", EXIT_INTERRUPTED, as_json=as_json)
    except BrokenPipeError:
        raise
    except OSError as error:
        return report(os_error_message(error), "filesystem", EXIT_FAILURE, as_json=as_json)
    except GitFailure as error:
        return report(git_failure_message(error), "git", EXIT_FAILURE, as_json=as_json)
    except RuntimeError as error:
        if not is_sandbox_unavailable(error):
            raise
        return report(f"sandbox: {error}", "sandbox", EXIT_FAILURE, as_json=as_json)  # e.g. bubblewrap refused to start


def missing_git() -> str | None:
    """Why nothing can start when git cannot be run (GitPython refuses to import without it), else None."""
    if shutil.which("git") is not None:
        return None
    return ("git is not installed, or not on PATH: tuiagent keeps its tools and checkpoints in git. Install it "
            "(Debian/Ubuntu: apt-get install git; macOS: xcode-select --install) and run tuiagent again")


def opens_tui(args: argparse.Namespace) -> bool:
    """The TUI validates the config itself and shows any problem on screen."""
    return args.command is None and getattr(args, "prompt", None) is None


def check_config(project_root: str) -> None:
    """Validate `.agent/config.toml` before a command starts anything: raises ConfigError, prints warnings."""
    from tui_agent.core.project import Project

    for warning in Project.at(project_root).load_settings().warnings:
        print(f"tuiagent: warning: {warning}", file=sys.stderr)


def resolve_project(args: argparse.Namespace) -> str | None:
    """Point `args.project` at the project root (run from a subfolder too); why the command cannot run, or None."""
    from tui_agent.core.rootfind import ProjectRootError, locate, outside_repository_message

    try:
        located = locate(Path(args.project))
    except ProjectRootError as error:
        return str(error)
    for warning in located.warnings:
        print(f"tuiagent: warning: {warning}", file=sys.stderr)
    args.project = str(located.root)
    creates_agent_dir = getattr(args, "sandbox_command", None) != "status" and args.command not in ("trust", "untrust")
    # the TUI asks; a headless prompt goes on without git (nothing is written to the folder)
    asks_first = getattr(args, "command", None) is None
    if (not located.in_repository and not (located.root / ".agent").is_dir() and creates_agent_dir
            and not getattr(args, "init_git", False) and not asks_first):
        return outside_repository_message(located.root)
    return None


def entry() -> None:
    """The `tuiagent` command: `main`, then exit without the interpreter's teardown when nothing is left running.

    Everything was closed by then (sessions, sandboxes, servers); freeing the modules one by one, the SDK's
    thousands of classes among them, would only add about 0.3 s before the shell prompt comes back."""
    gc.disable()  # start-up only allocates what lives on: collecting while it runs is wasted (dispatch/the TUI enable it)
    code = main()
    if threading.active_count() > 1:
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # a closed pipe: nothing more can reach it
            stream.flush()
    atexit._run_exitfuncs()  # logging's and the libraries' own exit handlers still run
    os._exit(code)


if __name__ == "__main__":
    entry()
