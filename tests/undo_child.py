"""A process that undoes the last turn of a session (tests/test_undo_interrupted.py kills it part-way).

argv: repo session_file. It prints `progress DONE TOTAL` as the undo goes (then pauses a little, so a signal sent on
reading the line lands at that point) and `result OK MESSAGE` at the end."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from tui_agent.core.agent.sessions import SessionLog
from tui_agent.core.undo.service import UndoService
from tui_agent.core.versioning.checkpoints import Checkpoints


def progress(done: int, total: int) -> None:
    print(f"progress {done} {total}", flush=True)
    time.sleep(0.3)


async def main(repo: Path, session_file: Path) -> None:
    checkpoints = Checkpoints.open(repo)
    assert checkpoints is not None
    service = UndoService(checkpoints)
    service.progress = progress
    print("ready", flush=True)
    result = await service.undo_last(SessionLog(session_file, session_file.stem))
    print(f"result {result.ok} {result.message[:200]}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1]), Path(sys.argv[2])))
