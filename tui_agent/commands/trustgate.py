"""The check commands that open a project's catalog make first: an untrusted project's tools are not imported, tested
or run (`tuiagent tools …`, `tuiagent mcp serve`); the refusal says why and how to trust it."""

from __future__ import annotations

import argparse
import sys

from tui_agent.commands.failures import CommandFailure


def require_trust(args: argparse.Namespace, what: str) -> None:
    """Raise CommandFailure (stage "trust") unless the project is trusted or `--trust-project` was given."""
    from tui_agent.core.project import Project
    from tui_agent.core.trust import check

    if getattr(args, "trust_project", False):
        return
    status = check(Project.at(args.project))
    if not status.trusted:
        raise CommandFailure(f"{what} refused: {status.reason()}", "trust")


def list_untrusted_tools(args: argparse.Namespace) -> int | None:
    """`tools list` in an untrusted project: the tools as their files say (status `untrusted`, nothing run); None
    when the project is trusted."""
    import json

    from tui_agent.core.project import Project
    from tui_agent.core.trust import check
    from tui_agent.core.trust.describe import tool_summary

    project = Project.at(args.project)
    status = check(project)
    if status.trusted or getattr(args, "trust_project", False):
        return None
    names = sorted(path.stem for path in project.tools_dir.glob("*.py") if not path.stem.startswith("_")) \
        if project.tools_dir.is_dir() else []
    rows = [{"name": name, "status": "untrusted", "summary": tool_summary(project.tool_path(name))} for name in names]
    print(f"tuiagent: {status.reason()}", file=sys.stderr)
    if getattr(args, "json", False):
        print(json.dumps(rows, indent=2))
    else:
        for row in rows:
            print(f"{row['name']:<32} {row['status']:<10} {row['summary']}")
    return 0
