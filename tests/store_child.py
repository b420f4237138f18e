"""Child process of the store concurrency tests (no tests here): a real catalog in its own process, driven by stdin.

Each command opens the catalog afresh (start-up: validation from the cache, git catch-up), as one `tuiagent tools`
command does, and closes it again; each answers with one JSON line on stdout:
  open             only the start-up
  prune NAME       what `tuiagent tools prune NAME` does
  prune-on-go NAME the same, but once the catalog is open it says so and waits for a line ("go") before pruning
  restore NAME     what `tuiagent tools restore NAME` does
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path


def say(**fields: object) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


async def run(root: Path) -> None:
    from tui_agent.core.catalog.api import Catalog
    from tui_agent.core.project import Project
    from tui_agent.core.sandbox.sandbox import Sandbox

    project = Project.at(root)
    sandbox = await Sandbox.start(project, tier="rlimits", warm_workers=1)
    say(ready=True)
    while line := await asyncio.to_thread(sys.stdin.readline):
        command, *args = line.split()
        catalog = await Catalog.open(project, sandbox)
        if command == "open":
            say(caught_up=catalog.load_report.caught_up, git_message=catalog.load_report.git_message)
        elif command in ("prune", "prune-on-go"):
            if command == "prune-on-go":
                say(opened=True)
                await asyncio.to_thread(sys.stdin.readline)
            outcome = await catalog.prune(args[0])
            say(committed=outcome.committed, message=outcome.message)
        elif command == "restore":
            record = (await catalog.restore(args[0])).record
            say(commit=record.commit)
        else:
            say(error=f"unknown command {line.strip()!r}")
        await catalog.aclose()
    await sandbox.aclose()


def slow_prune(root: Path, name: str, pause_s: float) -> None:
    """What a prune does (take the writer lock, delete the file, commit), with a pause between the deletion and the
    commit: the window in which a watcher that ignored the lock would commit the deletion as its own."""
    import time

    from tui_agent.core.catalog.files import atomic_delete
    from tui_agent.core.versioning.gitstore import CatalogGit
    from tui_agent.core.versioning.writelock import WriterLock

    rel = f".agent/tools/{name}.py"
    with WriterLock(root).held():
        atomic_delete(root / rel)
        say(deleted=True)
        time.sleep(pause_s)
        outcome = CatalogGit(root).commit({rel: None}, f"tuiagent: prune tool {name}")
    say(committed=outcome.committed, message=outcome.message)


if __name__ == "__main__" and sys.argv[2:3] == ["slow-prune"]:
    slow_prune(Path(sys.argv[1]), sys.argv[3], float(sys.argv[4]))
elif __name__ == "__main__":
    asyncio.run(run(Path(sys.argv[1])))
