"""Silent drift: DEPENDS_ON files and files a tool actually read, changed since its commit (committed or not)."""

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


async def test_drift(repo: Path) -> None:
    (repo / "data").mkdir()
    (repo / "data" / "limits.txt").write_text("max=10\nmin=1\n")
    (repo / "config.ini").write_text("mode=fast\n")
    git(repo, "add", "data", "config.ini")
    git(repo, "commit", "-q", "-m", "data")
    project = Project.at(repo)
    sandbox = await Sandbox.start(project, warm_workers=1)
    catalog = await Catalog.open(project, sandbox)
    try:
        await catalog.save_tool("limits", LIMITS)
        await catalog.save_tool("reader", READER)
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
        assert report.changed_files == ("data/extra.txt", "data/limits.txt")
        assert "-max=10" in report.diff and "+max=12" in report.diff and "+new" in report.diff
        assert report.tests_pass is False and "test_max_is_ten" in report.test_error["message"]
        assert report.since_commit == catalog.get("limits").commit

        reports = {r.name: r for r in await catalog.drift()}
        assert reports["reader"].changed_files == ("config.ini",)
        assert "+mode=slow" in reports["reader"].diff and reports["reader"].tests_pass is True
        assert reports["reader"].to_dict()["drifted"] is True
    finally:
        await catalog.aclose()
        await sandbox.aclose()
