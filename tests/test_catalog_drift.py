"""Silent drift (DEPENDS_ON files and files a tool read, changed since its commit) and the NETWORK flag reaching the sandbox."""

from __future__ import annotations

from pathlib import Path

from tests.gitrepo import git
from tui_agent.core.catalog.api import Catalog
from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox

LIMITS = '''
DEPENDS_ON = ["data/*.txt"]


def limits(key: str) -> int:
    """Read one limit from data/limits.txt.

    Args:
        key: the limit's name
    """
    for line in open("data/limits.txt"):
        name, _, value = line.strip().partition("=")
        if name == key:
            return int(value)
    raise KeyError(key)


def test_max_is_ten():
    assert limits("max") == 10
'''

READER = '''
def reader(section: str) -> str:
    """Return a line of config.ini.

    Args:
        section: text the line starts with
    """
    with open("config.ini") as handle:
        return next(line.strip() for line in handle if line.startswith(section))
'''

async def _opened_with_limits(repo: Path, *also: str) -> tuple[Project, Sandbox, Catalog]:
    """`data/limits.txt` (and the files `also` names, written by the caller) committed; the project's sandbox and catalog."""
    (repo / "data").mkdir()
    (repo / "data" / "limits.txt").write_text("max=10\nmin=1\n")
    git(repo, "add", "data", *also)
    git(repo, "commit", "-q", "-m", "data")
    project = Project.at(repo)
    sandbox = await Sandbox.start(project, warm_workers=1)
    return project, sandbox, await Catalog.open(project, sandbox)


async def test_drift(repo: Path) -> None:
    (repo / "config.ini").write_text("mode=fast\n")
    project, sandbox, catalog = await _opened_with_limits(repo, "config.ini")
    try:
        await catalog.save("limits", LIMITS)
        await catalog.save("reader", READER)
        assert (await catalog.call_tool("limits", {"key": "max"})).value == 10
        assert (await catalog.call_tool("reader", {"section": "mode"})).value == "mode=fast"
        assert catalog.state.files_read("reader") == ["config.ini"]
        assert {r.name: r.status for r in catalog.tools()} == {"limits": "ok", "reader": "ok"}
        [clean] = await catalog.drift("limits")
        assert not clean.drifted and clean.tests_pass is True and clean.watched_files == ("data/limits.txt",)

        (repo / "data" / "limits.txt").write_text("max=11\nmin=1\n")  # uncommitted
        (repo / "data" / "extra.txt").write_text("new\n")  # untracked, matches the glob
        (repo / "config.ini").write_text("mode=slow\n")
        git(repo, "commit", "-q", "-am", "user changes config")  # committed (limits.txt too)
        (repo / "data" / "limits.txt").write_text("max=12\nmin=1\n")  # and changed again, unstaged
        assert {r.name: r.status for r in catalog.tools()} == {"limits": "drifted", "reader": "drifted"}

        [report] = await catalog.drift("limits")
        assert report.changed_files == ("data/limits.txt",) and report.added_files == ("data/extra.txt",)
        assert "-max=10" in report.diff and "+max=12" in report.diff
        assert report.tests_pass is False and "test_max_is_ten" in report.test_error["message"]
        assert report.since_commit == catalog.get("limits").commit

        reports = {r.name: r for r in await catalog.drift()}
        assert reports["reader"].changed_files == ("config.ini",)
        assert "+mode=slow" in reports["reader"].diff and reports["reader"].tests_pass is True
        assert reports["reader"].to_dict()["drifted"] is True
    finally:
        await catalog.aclose()
        await sandbox.aclose()


NETTOOL = '''
NETWORK = True


def ping(port: int) -> str:
    """Ask the sandbox's network proxy for a local port (issue 33: it refuses) and read its answer.

    Args:
        port: the TCP port on 127.0.0.1
    """
    import socket
    with socket.create_connection(("127.0.0.1", 3128), timeout=5) as conn:
        conn.sendall(f"CONNECT 127.0.0.1:{port} HTTP/1.1\\r\\n\\r\\n".encode())
        return conn.recv(300).decode()
'''


async def test_network_tools_get_the_network_only_when_allowed(repo: Path) -> None:
    import asyncio

    greeted: list[bool] = []

    async def greet(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        greeted.append(True)
        writer.write(b"hello")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(greet, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    project = Project.at(repo)
    sandbox = await Sandbox.start(project, warm_workers=1)
    catalog = await Catalog.open(project, sandbox)
    try:
        record = (await catalog.save("ping", NETTOOL)).record
        assert record.spec is not None and record.spec.network is True
        denied = await catalog.call_tool("ping", {"port": port})
        assert not denied.ok
        allowed = await catalog.call_tool("ping", {"port": port}, allow_network=True)
        assert allowed.ok and allowed.value.startswith("HTTP/1.1 403 Forbidden"), allowed  # a way out, not to the host
        assert "127.0.0.1 is a loopback address" in allowed.value and greeted == []
    finally:
        server.close()
        await catalog.aclose()
        await sandbox.aclose()


NOTES = '''
DEPENDS_ON = ["notes/*.txt"]


def notes() -> str:
    """Read the untracked notes file."""
    return open("notes/todo.txt").read()
'''


async def test_an_untracked_dependency_drifts_only_when_it_changes_after_authoring(repo: Path) -> None:
    import os
    import time

    (repo / "notes").mkdir()
    todo = repo / "notes" / "todo.txt"
    todo.write_text("buy milk\n")
    os.utime(todo, (time.time() - 60, time.time() - 60))  # written well before the tool
    project = Project.at(repo)
    sandbox = await Sandbox.start(project, warm_workers=1)
    catalog = await Catalog.open(project, sandbox)
    try:
        await catalog.save("notes", NOTES)
        assert git(repo, "status", "--porcelain", "--", "notes") == "?? notes/\n"
        assert catalog.get("notes").status == "unused"
        [report] = await catalog.drift("notes")
        assert report.watched_files == ("notes/todo.txt",) and report.changed_files == ()
        commit_time = catalog.drift_checker.trees.commit_time(catalog.get("notes").commit)
        todo.write_text("buy bread\n")
        os.utime(todo, (commit_time + 5, commit_time + 5))
        assert catalog.get("notes").status == "drifted"
        [report] = await catalog.drift("notes")
        assert report.changed_files == ("notes/todo.txt",) and "+buy bread" in report.diff
    finally:
        await catalog.aclose()
        await sandbox.aclose()


async def test_a_tool_is_not_drifted_at_birth_when_its_dependency_has_uncommitted_edits(repo: Path) -> None:
    import os
    import time

    (repo / "data").mkdir()
    limits = repo / "data" / "limits.txt"
    limits.write_text("max=10\nmin=1\n")
    git(repo, "add", "data")
    git(repo, "commit", "-q", "-m", "data")
    limits.write_text("max=10\nmin=2\n")  # the person's uncommitted edit, made before the tool is written
    os.utime(limits, (time.time() - 60, time.time() - 60))
    project = Project.at(repo)
    sandbox = await Sandbox.start(project, warm_workers=1)
    catalog = await Catalog.open(project, sandbox)
    try:
        await catalog.save("limits", LIMITS)
        assert catalog.get("limits").status != "drifted"
        [report] = await catalog.drift("limits")
        assert report.changed_files == () and not report.drifted
        await catalog.save("limits", LIMITS.replace("Read one limit", "Read a limit"))  # an update: same
        assert catalog.get("limits").status != "drifted"
        commit_time = catalog.drift_checker.trees.commit_time(catalog.get("limits").commit)
        limits.write_text("max=10\nmin=3\n")  # an edit after the version was written: drift
        os.utime(limits, (commit_time + 5, commit_time + 5))
        assert catalog.get("limits").status == "drifted"
        [report] = await catalog.drift("limits")
        assert report.changed_files == ("data/limits.txt",) and "-min=2" in report.diff and "+min=3" in report.diff
    finally:
        await catalog.aclose()
        await sandbox.aclose()


async def test_the_drift_key_and_the_watchers_recheck_at_once_both_run_the_tests(repo: Path) -> None:
    """The UI's drift report and the file watcher's re-check inspect the same tool version at the same time: each
    stages its own copy, so neither imports a copy the other has already removed (`drifted · failing` otherwise)."""
    import asyncio

    _project, sandbox, catalog = await _opened_with_limits(repo)
    try:
        await catalog.save("limits", LIMITS)
        (repo / "data" / "limits.txt").write_text("max=10\nmin=2\n")
        git(repo, "commit", "-q", "-am", "user changes the minimum")
        reports = await asyncio.gather(catalog.drift("limits"), catalog.recheck_drift(), catalog.drift("limits"))
        assert [(report.tests_pass, report.test_error) for batch in reports for report in batch] == [(True, None)] * 3
        assert catalog.get("limits").status == "drifted"
    finally:
        await catalog.aclose()
        await sandbox.aclose()
