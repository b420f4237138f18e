"""The check commands that open a project's catalog make first: an untrusted project's tools are not imported, tested
or run (`tuiagent tools …` but the read-only views, `tuiagent mcp serve`); the refusal says why and how to trust it."""

from __future__ import annotations

import argparse

from tui_agent.commands.failures import CommandFailure


def require_trust(args: argparse.Namespace, what: str) -> None:
    """Raise CommandFailure (stage "trust") unless the project is trusted or `--trust-project` was given."""
    from tui_agent.core.project import Project
    from tui_agent.core.trust import check
    from tui_agent.core.trust.check import trust_for_this_run

    if getattr(args, "trust_project", False):
        trust_for_this_run(Project.at(args.project))  # its git configuration too, for this run's commits
        return
    status = check(Project.at(args.project))
    if not status.trusted:
        raise CommandFailure(f"{what} refused: {status.reason()}", "trust")


