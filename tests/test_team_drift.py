"""Drift a team can live with: new files matching a glob are no drift while the tests pass, a conflicted tool is never
"no drift", and a reviewed drift is settled with `tools drift NAME --accept` (committed, so a teammate's clone agrees)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.gitrepo import git, init_repo
from tui_agent.cli import main

LOGS = '''
DEPENDS_ON = ["logs/*.log"]


def errors(pattern: str) -> int:
    """Count lines containing a pattern in the logs.

    Args:
        pattern: the text to look for
    """
    import glob
    return sum(open(path).read().count(pattern) for path in sorted(glob.glob("logs/*.log")))


def test_errors():
    assert errors("{probe}") == 0
'''


def tools(repo: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["--project", str(repo), "tools", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def statuses(repo: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    code, out, err = tools(repo, capsys, "list", "--json")
    assert code == 0, err
    return {tool["name"]: tool["status"] for tool in json.loads(out)}


def with_log_tool(tmp_path: Path, probe: str = "NEVER-THERE") -> Path:
    repo = init_repo(tmp_path / "repo")
    (repo / "logs").mkdir()
    (repo / "logs" / "a.log").write_text("ok\n")
    (repo / ".agent" / "tools").mkdir(parents=True)
    (repo / ".agent" / "tools" / "errors.py").write_text(LOGS.replace("{probe}", probe))
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "logs and a tool")
    return repo


def test_a_new_file_matching_the_glob_is_no_drift_while_the_tests_pass(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    repo = with_log_tool(tmp_path)
    assert statuses(repo, capsys) == {"errors": "unused"}
    (repo / "logs" / "b.log").write_text("a new log\n")
    assert statuses(repo, capsys) == {"errors": "unused"}
    [report] = json.loads(tools(repo, capsys, "drift", "errors", "--json")[1])
    assert report["drifted"] is False and report["added_files"] == ["logs/b.log"] and report["tests_pass"] is True
    (repo / "logs" / "a.log").write_text("ok\nchanged\n")  # a file it depends on changed: that is drift
    assert statuses(repo, capsys) == {"errors": "drifted"}


def test_a_new_file_that_makes_the_tests_fail_is_drift(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = with_log_tool(tmp_path, probe="PANIC")
    assert statuses(repo, capsys) == {"errors": "unused"}
    (repo / "logs" / "c.log").write_text("PANIC\n")
    assert statuses(repo, capsys) == {"errors": "drifted · failing"}
    code, out, _ = tools(repo, capsys, "drift", "errors")
    assert "logs/c.log" in out and "tests fail with them" in out


def test_accepting_a_drift_settles_it_for_the_team(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = with_log_tool(tmp_path)
    tools(repo, capsys, "list")
    (repo / "logs" / "a.log").write_text("ok\nrotated\n")
    git(repo, "commit", "-q", "-am", "logs rotated")
    assert statuses(repo, capsys) == {"errors": "drifted"}
    code, out, err = tools(repo, capsys, "drift", "errors", "--accept")
    assert code == 0 and "accepted the drift of errors" in out, err
    assert statuses(repo, capsys) == {"errors": "unused"}
    assert git(repo, "log", "-1", "--format=%s").startswith("tuiagent: accept drift of tool errors")
    assert ".agent/drift-reviews.json" in git(repo, "show", "--name-only", "--format=", "HEAD")
    assert git(repo, "status", "--porcelain") == ""
    teammate = tmp_path / "teammate"
    git(tmp_path, "clone", "-q", str(repo), str(teammate))
    assert statuses(teammate, capsys) == {"errors": "unused"}  # the review travels with the catalog
    (repo / "logs" / "a.log").write_text("ok\nrotated\nagain\n")
    assert statuses(repo, capsys) == {"errors": "drifted"}  # a later change drifts again
    (repo / "logs" / "b.log").write_text("uncommitted\n")
    tools(repo, capsys, "drift", "errors", "--accept")  # reviewed with an uncommitted dependency
    (repo / "logs" / "b.log").write_text("uncommitted\nthen changed\n")
    [report] = json.loads(tools(repo, capsys, "drift", "errors", "--json")[1])
    assert report["changed_files"] == ["logs/b.log"] and "+then changed" in report["diff"]


def test_a_conflicted_tool_is_never_no_drift(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = with_log_tool(tmp_path)
    tool = repo / ".agent" / "tools" / "errors.py"
    git(repo, "checkout", "-q", "-b", "other")
    tool.write_text(tool.read_text().replace("Count lines", "Count the lines"))
    git(repo, "commit", "-q", "-am", "other")
    git(repo, "checkout", "-q", "main")
    tool.write_text(tool.read_text().replace("Count lines", "Count all lines"))
    git(repo, "commit", "-q", "-am", "main")
    git(repo, "merge", "--squash", "other", check=False)
    code, out, _ = tools(repo, capsys, "drift", "errors")
    assert "errors: broken: unresolved conflict" in out and "no drift" not in out
    [report] = json.loads(tools(repo, capsys, "drift", "errors", "--json")[1])
    assert report["broken"].startswith("broken: unresolved conflict")
    code, out, err = tools(repo, capsys, "drift", "errors", "--accept")
    assert code != 0 and "unresolved conflict" in out + err
