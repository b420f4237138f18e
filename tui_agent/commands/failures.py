"""How the CLI reports a failure: one line on stderr, or `{"error", "stage"}` on stdout with --json, and an exit code."""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TypeAlias

from tui_agent.core.errors import TuiAgentError

EXIT_FAILURE = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for `producer | head -1`

JSON_FORMATS = ("json", "stream-json")


class UsageFailure(TuiAgentError):
    """The command line itself is wrong (argparse's error, raised instead of exiting)."""

    def __init__(self, message: str, usage: str) -> None:
        super().__init__(message)
        self.usage = usage


class CommandFailure(TuiAgentError):
    """A command cannot go on; `main` reports `message` at `stage` with exit code `code`."""

    def __init__(self, message: str, stage: str, code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.stage, self.code = stage, code


class CliParser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are raised, so that `main` can report them as text or JSON."""

    def error(self, message: str) -> NoReturn:
        raise UsageFailure(f"{self.prog}: {message}", self.format_usage())


Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"
"""What `add_subparsers` returns: each command group's `register` adds its commands to it."""


def wants_json(argv: Sequence[str]) -> bool:
    """Whether the command line asks for JSON output (`--json`, `--output-format json`), even if it fails to parse."""
    for index, item in enumerate(argv):
        if item == "--":
            return False
        if item == "--json" or item.startswith("--json="):
            return True
        if item.startswith("--output-format="):
            return item.partition("=")[2] in JSON_FORMATS
        if item == "--output-format" and index + 1 < len(argv):
            return argv[index + 1] in JSON_FORMATS
    return False


def report(message: str, stage: str, code: int, *, as_json: bool, **details: Any) -> int:
    """Print one failure and return its exit code."""
    if as_json:
        print(json.dumps({"error": message, "stage": stage, **details}, default=str))
    else:
        print(message if message.startswith("tuiagent") else f"tuiagent: {message}", file=sys.stderr)
    return code


def is_sandbox_unavailable(error: BaseException) -> bool:
    """Whether `error` is a SandboxUnavailable (without importing the sandbox package when no command used it)."""
    policy = sys.modules.get("tui_agent.core.sandbox.policy")
    return policy is not None and isinstance(error, policy.SandboxUnavailable)


def os_error_message(error: OSError) -> str:
    """What a filesystem error means for the user and what to do about it."""
    where = f" {error.filename}" if error.filename else ""
    reason = error.strerror or str(error)
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"cannot write{where}: the disk is full ({reason}); free some space and run the command again"
    if error.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return f"cannot write{where}: {reason}; the project or its .agent/ folder is not writable"
    if error.errno == errno.EFBIG:
        return f"cannot write{where}: the file size limit was reached ({reason})"
    return f"{reason}{':' + where if where else ''}"


def git_failure_message(error: Exception) -> str:
    text = " ".join(str(error).split())
    if "No space left" in text or "Out of diskspace" in text:
        return f"{text}; the disk is full: free some space and run the command again (nothing was committed)"
    return f"{text}; nothing was committed"


def silence_stdout() -> None:
    """After a broken pipe: point stdout at /dev/null so that the interpreter's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # stdout is not a real file (a test's capture): nothing to silence
        pass
