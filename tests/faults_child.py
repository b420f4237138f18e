"""Child process of the fault-injection test (no tests here): opens the real catalog, reports its state, then creates,
updates, reverts, prunes and restores a tool forever, announcing each step on stdout, until it is killed.

Run with `--serve FD` it is a fork server: it imports the catalog once, then forks one such child per request on the
Unix socket FD (the request carries the child's stdout and stderr), each in a session of its own, and answers with
the child's pid. A forked child is a new process with a new catalog and sandbox, as a fresh start would be; it only
skips the interpreter's start-up and imports, most of a trial's time otherwise."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import random
import select
import socket
import subprocess
import sys
import traceback
from pathlib import Path

NAME = "fault_tool"


def version(k: int) -> bytes:
    """Version k of the tool: a valid tool with its own test (different content for each k)."""
    return (
        f"def {NAME}(x: int) -> int:\n"
        f'    """Add {k} to x.\n\n    Args:\n        x: a number\n    """\n'
        f"    return x + {k}\n\n\n"
        f"def test_{NAME}() -> None:\n"
        f"    assert {NAME}(1) == {k + 1}\n"
    ).encode()


VERSIONS = [version(k) for k in range(4)]


def digest(data: bytes | None) -> str | None:
    return hashlib.sha256(data).hexdigest()[:16] if data is not None else None


def say(**fields: object) -> None:
    sys.stdout.write(json.dumps(fields) + "\n")
    sys.stdout.flush()


def git_out(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False).stdout


async def run(root: Path, seed: int) -> None:
    from tui_agent.core.catalog.api import Catalog
    from tui_agent.core.catalog.errors import PipelineError
    from tui_agent.core.project import Project
    from tui_agent.core.sandbox.sandbox import Sandbox

    project = Project.at(root)
    sandbox = await Sandbox.start(project, tier="rlimits", warm_workers=1)
    catalog = await Catalog.open(project, sandbox)
    path = project.tool_path(NAME)
    rel = project.relative(path)
    say(ready=True, pending=catalog.git.pending(), git_message=catalog.load_report.git_message,
        tools_status=git_out(root, "status", "--porcelain", "--untracked-files=all", "--", ".agent/tools"),
        disk=digest(path.read_bytes() if path.exists() else None))
    rng = random.Random(seed)
    while True:
        old = path.read_bytes() if path.exists() else None
        try:
            if old is None:
                found = catalog.git.last_version_before_deletion(rel)
                if found is not None:
                    say(op="restore", old=None, new=digest(found[1]))
                    await catalog.restore(NAME)
                else:
                    new = rng.choice(VERSIONS)
                    say(op="create", old=None, new=digest(new))
                    await catalog.save(NAME, new.decode())
            else:
                op = rng.choice(["update", "update", "revert", "prune"])
                if op == "update":
                    new = rng.choice([v for v in VERSIONS if v != old])
                    say(op=op, old=digest(old), new=digest(new))
                    await catalog.save(NAME, new.decode())
                elif op == "revert":
                    earlier = [h for h in catalog.history(NAME) if not h.deleted and catalog.git.show(rel, h.rev) != old]
                    if not earlier:
                        continue
                    target = earlier[0].rev
                    say(op=op, old=digest(old), new=digest(catalog.git.show(rel, target)))
                    await catalog.revert(NAME, target)
                else:
                    say(op=op, old=digest(old), new=None)
                    await catalog.prune(NAME)
        except PipelineError as error:
            say(error=str(error.to_dict()))
            raise
        say(done=True)


def child_main(sock: socket.socket, request: bytes, fds: list[int]) -> None:
    """In the forked child: its own session, the requested stdout/stderr, then the catalog loop until killed."""
    sock.close()
    os.setsid()
    os.dup2(fds[0], 1)
    os.dup2(fds[1], 2)
    for fd in fds:
        os.close(fd)
    repo, seed = request.decode().split("\0")
    code = 1
    try:
        asyncio.run(run(Path(repo), int(seed)))
    except BaseException:  # noqa: BLE001 - a child's end: reported on its stderr, as an uncaught error would be
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve(sock: socket.socket) -> None:
    """Fork one child per request until the test closes its end; reap the children as they are killed."""
    import tui_agent.core.catalog.api  # noqa: F401 - imported once here, inherited by every forked child
    import tui_agent.core.sandbox.sandbox  # noqa: F401

    while True:
        while True:
            try:
                if os.waitpid(-1, os.WNOHANG)[0] == 0:
                    break
            except ChildProcessError:
                break
        if not select.select([sock], [], [], 0.05)[0]:
            continue
        request, fds, _flags, _address = socket.recv_fds(sock, 4096, 2)
        if not request:
            return
        pid = os.fork()
        if pid == 0:
            child_main(sock, request, fds)
        for fd in fds:
            os.close(fd)
        sock.send(str(pid).encode())


if __name__ == "__main__":
    if sys.argv[1] == "--serve":
        serve(socket.socket(fileno=int(sys.argv[2])))
    else:
        asyncio.run(run(Path(sys.argv[1]), int(sys.argv[2])))
