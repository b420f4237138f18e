"""`tuiagent tools history`'s result, the same for a trusted catalog and an untrusted preview: every version with its
author (both sides of a merge, merges marked), and a shallow clone said as such."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tui_agent.core.textsafety import escaped
from tui_agent.commands.catalog_cli import Result

if TYPE_CHECKING:
    from tui_agent.core.versioning.gitqueries import HistoryEntry


def history_result(name: str, entries: Sequence[HistoryEntry], shallow: str | None) -> Result:
    data = [{"rev": e.rev, "short": e.short, "date": e.date, "author": e.author, "message": e.message, "deleted": e.deleted,
             "merge": e.merge} for e in entries]
    text = "\n".join(f"{e.short}  {e.date}  {escaped(e.author)}  {escaped(e.message)}" for e in entries) or f"{name} has no commits yet"
    if shallow:
        text += f"\n({shallow})"
    return data, text, 0
