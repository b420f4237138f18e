"""`tuiagent tools list / show / history / diff` in an untrusted project: read from the files and git only (nothing
imported, tested or run), through the restricted runtime's read-only PreviewStore."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tui_agent.core.textsafety import escaped, escaped_lines
from tui_agent.commands.catalog_cli import Result, error_result, print_result
from tui_agent.commands.tools_history import history_result

READ_ONLY = ("list", "show", "history", "diff")
"""The `tools` commands that only read files and git, so they work before the project is trusted."""


def preview_untrusted(args: argparse.Namespace) -> int | None:
    """Run a read-only `tools` command on an untrusted project's files (the reason on stderr first); None when the
    project is trusted (or `--trust-project`), or the command is not read-only: the caller opens the catalog."""
    from tui_agent.core.catalog.errors import PipelineError
    from tui_agent.core.project import Project
    from tui_agent.core.trust import check
    from tui_agent.core.trust.preview import PreviewStore
    from tui_agent.core.versioning.gitstore import CatalogGit

    if args.tools_command not in READ_ONLY or getattr(args, "trust_project", False):
        return None
    project = Project.at(args.project)
    status = check(project)
    if status.trusted:
        return None
    print(f"tuiagent: {status.reason()}", file=sys.stderr)
    store = PreviewStore(project, "tool", CatalogGit(project.root))
    as_json = bool(getattr(args, "json", False))
    try:
        result = VIEWS[args.tools_command](store, args)
    except PipelineError as error:
        result = error_result(error)
    return print_result(result, as_json)


def _list(store: Any, args: argparse.Namespace) -> Result:
    rows = [{"name": item.name, "status": item.status, "summary": item.summary} for item in store.items()]
    text = "\n".join(f"{escaped(row['name']):<32} {row['status']:<10} {escaped(row['summary'])}" for row in rows)
    return rows, text or "no tools yet (.agent/tools/ is empty)", 0


def _missing(name: str) -> Result:
    return {"error": f"no tool named {name!r}", "stage": "missing", "line": None}, f"error [missing]: no tool named {name!r}", 1


def _show(store: Any, args: argparse.Namespace) -> Result:
    item = next((item for item in store.items() if item.name == args.name), None)
    source = store.source(args.name)
    if item is None or source is None:
        return _missing(args.name)
    path = store.project.relative(store.project.tool_path(args.name))
    data = {"name": item.name, "status": item.status, "summary": item.summary, "path": path, "source": source}
    header = [f"{item.name}  [{item.status}]  {item.summary}", f"file: {path}", f"not imported or tested: {item.error}"]
    text = "\n".join(escaped(line) for line in header) + "\n\n" + escaped_lines(source)
    return data, text, 0


def _history(store: Any, args: argparse.Namespace) -> Result:
    entries = store.history(args.name)
    if not entries and store.source(args.name) is None:
        return _missing(args.name)
    return history_result(args.name, entries, store.git.shallow_note())


def _diff(store: Any, args: argparse.Namespace) -> Result:
    diff = store.diff(args.name, args.rev)
    return {"name": args.name, "rev": args.rev, "diff": diff}, escaped_lines(diff.rstrip("\n")) or "no differences", 0


VIEWS = {"list": _list, "show": _show, "history": _history, "diff": _diff}
