"""The machine's processes as /proc lists them: (pid, state, parent pid, process group) each, zombies included."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path


def processes() -> Iterator[tuple[int, str, int, int]]:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # it ended while the folder was read
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        yield int(entry.name), fields[0], int(fields[1]), int(fields[2])
