"""`tuiagent tools commit`: the person's go-ahead to run their git hooks and commit what the catalog holds back."""

from __future__ import annotations

import argparse
import asyncio
from typing import TYPE_CHECKING, Any

from tui_agent.commands.catalog_cli import Result
from tui_agent.core.content import JsonObject

if TYPE_CHECKING:  # imported when the command runs, not with every `tuiagent` start (the TUI and `-p` included)
    from tui_agent.core.project import Project
    from tui_agent.core.versioning.hookhold import Hold

HELP = ("run your git hooks and commit the catalog changes waiting for them (after agent code wrote the project, "
        "catalog commits that would run hooks wait for this)")


def release_hold(project: Project) -> Hold | str | None:
    """Lift the hooks hold before the catalog opens (its catch-up then runs the hooks); the error text if it cannot."""
    from tui_agent.core.versioning import hookhold

    try:
        return hookhold.release(project.root)
    except OSError as exc:
        return f"could not lift the hooks hold: {exc.strerror or exc}"


async def cmd_commit(catalog: Any, args: argparse.Namespace, _: JsonObject) -> Result:
    released = getattr(args, "released_hold", None)  # set by tools.run_command before the catalog opened
    if isinstance(released, str):
        return {"error": released}, f"tuiagent tools commit: {released}", 1
    outcome = await asyncio.to_thread(catalog.git.catch_up)  # the hold was lifted before the catalog opened
    from tui_agent.core.versioning.hookhold import Hold

    causes = list(released.causes) if isinstance(released, Hold) else []
    pending = catalog.git.pending()
    data = {"released_hold": causes, "committed": outcome.committed, "sha": outcome.sha,
            "deferred_reason": outcome.deferred_reason, "message": outcome.message, "pending": sorted(pending)}
    lines = []
    if causes:
        lines.append(f"Lifted the hooks hold ({len(causes)} agent write{'s' if len(causes) != 1 else ''} since the last one; "
                     f"latest: {causes[-1]}).")
    if catalog.load_report.git_message:
        lines.append(f"At open: {catalog.load_report.git_message}")
    lines.append(outcome.message if pending or outcome.committed else "Nothing of the catalog waits for a commit.")
    return data, "\n".join(lines), 1 if outcome.deferred_reason else 0
