"""What `tuiagent tools` and `tuiagent recipes` share: the version subcommands, the unknown-name error and printing a result."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from tui_agent.core.textsafety import for_terminal

Result = tuple[Any, str, int]  # (data for --json, text for people, exit code)


def add_version_actions(action: Callable[[str, str], argparse.ArgumentParser], noun: str) -> None:
    """`history`, `diff`, `revert`, `prune`, `restore` for a catalog file (`noun` is "tool" or "recipe")."""
    action("history", f"the commits that touched a {noun}").add_argument("name")
    diff = action("diff", f"a {noun}'s diff from REV (default: its previous version) to the work tree")
    diff.add_argument("name")
    diff.add_argument("rev", nargs="?")
    revert = action("revert", "back to the previous (or given) version, as a new commit")
    revert.add_argument("name")
    revert.add_argument("rev", nargs="?")
    action("prune", f"delete a {noun} (a commit; `restore` brings it back)").add_argument("name")
    action("restore", f"bring a pruned or deleted {noun} back from git history").add_argument("name")


def need(record: Any, noun: str, name: str) -> Any:
    """`record` itself, or the `missing` error that points at `tuiagent <noun>s list`."""
    from tui_agent.core.catalog.errors import PipelineError

    if record is None:
        raise PipelineError("missing", f"no {noun} named {name!r} (see `tuiagent {noun}s list`)")
    return record


def error_result(error: Any) -> Result:
    """A PipelineError as a result: `{"error", "stage", "line"}` for --json, `tuiagent: stage: message (line N)` for
    people (the one failure format of every command), exit 1."""
    line = f" (line {error.line})" if error.line else ""
    return ({"error": error.message, "stage": error.stage, "line": error.line},
            f"tuiagent: {error.stage}: {error.message}{line}", 1)


def print_result(result: Result, as_json: bool) -> int:
    """Print JSON, or the text (to stderr when the command failed); return the exit code."""
    data, text, code = result
    if as_json and code and isinstance(data, dict) and "stage" not in data:
        data = {**data, "error": data.get("error") or text, "stage": data.get("error_kind") or "run"}
    elif as_json and code and not isinstance(data, dict):
        data = {"error": text, "stage": "command", "result": data}
    if as_json:
        print(json.dumps(data, indent=2, default=str))
    elif text:
        stream = sys.stderr if code else sys.stdout
        print(for_terminal(stream, text), file=stream)  # tool output, names, descriptions: agent code chose them
    return code


def name_refusal(args: argparse.Namespace, noun: str) -> str | None:
    """The error for a NAME argument that cannot name a tool or recipe (checked before anything is opened)."""
    from tui_agent.core.catalog.names import lookup_problem

    name = getattr(args, "name", None)
    if name is None:
        return None
    problem = lookup_problem(name, noun)
    return f"tuiagent {noun}s {getattr(args, noun + 's_command', '')}: {problem}" if problem else None
