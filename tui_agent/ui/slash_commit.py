"""`/commit`: the person's go-ahead to run their git hooks on the catalog commits held after agent code wrote the project."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from tui_agent.core.versioning import hookhold
from tui_agent.core.runtime_state import catalog_of

if TYPE_CHECKING:
    from tui_agent.core.versioning.gitstore import CatalogGit, CommitOutcome
    from tui_agent.ui.host import UIHost


def release_and_commit(git: CatalogGit) -> tuple[hookhold.Hold | None, CommitOutcome]:
    """Lift the hooks hold, then commit what waits in the journal (the hooks run now)."""
    released = hookhold.release(git.root)
    return released, git.catch_up()


async def slash_commit(app: UIHost, args: str) -> None:
    catalog = catalog_of(app.state)
    if catalog is None:
        await app.add_notice("/commit: the project is still opening; try again in a moment.", "warning")
        return
    try:
        released, outcome = await asyncio.to_thread(release_and_commit, catalog.git)
    except OSError as exc:
        await app.add_notice(f"/commit: could not lift the hooks hold: {exc.strerror or exc}", "error")
        return
    lifted = f"Lifted the hooks hold (latest agent write: {released.causes[-1]}). " if released and released.causes else ""
    waiting = outcome.committed or outcome.deferred_reason or catalog.git.pending()
    text = outcome.message if waiting else "nothing of the catalog waits for a commit"
    await app.add_notice(f"/commit: {lifted}{text}", "warning" if outcome.deferred_reason else "info")
    app.schedule_catalog_refresh()
