"""session/load: a recorded session's conversation replayed to the client as the `session/update`s it first streamed."""

from __future__ import annotations

from pathlib import Path

from acp import update_user_message_text

from tui_agent.acp.updates import EventMapper, Update
from tui_agent.core.agent.session_events import decode_events
from tui_agent.core.agent.sessions import read_records
from tui_agent.core.events import TurnStarted


def replayed(root: Path, session_file: Path) -> list[Update]:
    """Each prompt as a user_message_chunk, then its turn's updates (an edit's diff is not rebuilt: the files have
    moved on since; the call's locations and result are shown)."""
    mapper = EventMapper(root, replay=True)
    updates: list[Update] = []
    for event in decode_events(read_records(session_file)).events:
        if isinstance(event, TurnStarted):
            updates.append(update_user_message_text(event.prompt))
        else:
            updates += mapper.updates(event)
    return updates
