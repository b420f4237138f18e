"""Issue 36: web_fetch reads a public page as text through the network grant, asks once per new host, and never
reaches this machine or its LAN. Checked by effect against the fake internet host of tests/net_scenario.py (what
its log and the loopback listener recorded), through real Permissions and the real fetch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.test_sandbox_network import _unavailable

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def web(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    reason = _unavailable()
    if reason is not None:
        pytest.skip(reason)
    work = tmp_path_factory.mktemp("web")
    done = subprocess.run(["unshare", "-rnm", sys.executable, "-m", "tests.web_scenario", str(work)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    results: dict[str, Any] = json.loads(done.stdout)
    return results


def _log(web: dict[str, Any], tag: str) -> list[str]:
    return [line for line in web["internet_log"] if tag in line]


def test_a_page_comes_back_as_markdown_without_scripts_or_styles(web: dict[str, Any]) -> None:
    page = web["page"]
    assert page.startswith("ok: https://files.example.org/page.html (HTTP 200, text/html"), page
    for kept in ("# The Page", "## Install", "[the docs](https://docs.example.org/x)", "- one\n- two",
                 "```\npip install thing\n```"):
        assert kept in page, (kept, page)
    for dropped in ("script text", "color: red", "enable javascript"):
        assert dropped not in page
    assert web["again"].startswith("ok: http://files.example.org/hello.txt") and "hello from the fake internet" in web["again"]


def test_the_first_fetch_of_a_host_asks_and_later_ones_do_not(web: dict[str, Any]) -> None:
    files = [line for line in web["asked"] if "domain:files.example.org" in line]
    assert len(files) == 1 and files[0].startswith("web domain:files.example.org fetch https://files.example.org/page.html")
    assert "web_fetch(domain:files.example.org)" in web["session_rules"]


def test_a_denied_host_fetches_nothing(web: dict[str, Any]) -> None:
    assert web["denied"].startswith("failure: denied: the user did not approve this web call"), web["denied"]
    assert any("domain:a.cdn.example.org" in line for line in web["asked"])
    assert not _log(web, "denied-page") and not _log(web, "a.cdn.example.org /denied")


def test_the_host_loopback_and_lan_stay_unreachable_and_nobody_is_asked(web: dict[str, Any]) -> None:
    assert web["loopback_heard"] == [], web["loopback_heard"]
    assert web["loopback"] == "failure: refused: 127.0.0.1 is a loopback address"
    assert web["localhost"].startswith("failure: refused: localhost resolves to") and "loopback" in web["localhost"]
    assert web["sneaky"] == "failure: refused: sneaky.example.org resolves to 127.0.0.1, a loopback address"
    assert web["lan"] == "failure: refused: lan.example.org resolves to 10.77.0.2, a private address"
    assert not _log(web, "wf-lan")
    assert not any(host in line for line in web["asked"] for host in ("127.0.0.1", "localhost", "sneaky", "lan."))


def test_a_redirect_to_another_host_is_not_followed(web: dict[str, Any]) -> None:
    assert web["redirect"].startswith("failure: refused: other.example.net is not in the network grant"), web["redirect"]
    assert "needs its own web_fetch call" in web["redirect"]
    assert not _log(web, "other.example.net /wf-redirected")


def test_non_text_is_refused_long_text_is_cut_errors_are_errors(web: dict[str, Any]) -> None:
    assert web["image"] == ("failure: http://files.example.org/image.png: the response is image/png, not text: "
                            "web_fetch reads web pages and text only")
    long = web["long"]
    assert long.startswith("ok: http://files.example.org/long.txt") and long.endswith("[truncated]")
    assert "middle was cut" in long and "line 0\n" in long and "line 19999" in long and "line 10000\n" not in long
    assert web["missing"].startswith("error: http://files.example.org/missing-page (HTTP 404")
    assert web["ftp"] == "failure: 'ftp://files.example.org/x' is not an http:// or https:// URL"


def test_read_only_and_auto_modes_ask_and_a_domain_rule_covers_its_names(web: dict[str, Any]) -> None:
    """read-only: a fetch changes nothing, so it is asked about, not refused; auto accepts edits only."""
    assert web["read_only"].startswith("ok: http://files.example.org/hello.txt")
    assert web["auto"].startswith("ok: http://files.example.org/hello.txt")
    assert [line.split(" ")[1] for line in web["asked_modes"]] == ["domain:files.example.org"] * 2
    assert web["ruled"].startswith("ok: http://a.cdn.example.org/hello.txt")


def test_domain_rules_parse_match_and_are_offered_by_the_approval() -> None:
    from tui_agent.core.agent.permission_rules import RuleError, parse_rule, suggested_rule
    from tui_agent.ui.screens.approval import answer_choices

    wildcard = parse_rule("web_fetch(domain:*.Python.org)")
    assert wildcard.text == "web_fetch(domain:*.python.org)"
    assert wildcard.matches("web_fetch", "domain:docs.python.org", False)
    assert not wildcard.matches("web_fetch", "domain:python.org", False)
    assert not wildcard.matches("web_fetch", "domain:docs.python.org.evil.example", False)
    assert not parse_rule("web_fetch(domain:docs.python.org)").matches("run_shell", "domain:docs.python.org", False)
    for bad in ("web_fetch(docs.python.org)", "web_fetch(domain:)", "web_fetch(domain:a b)"):
        with pytest.raises(RuleError, match="web_fetch takes a host"):
            parse_rule(bad)
    assert suggested_rule("web_fetch", "domain:docs.python.org") == "web_fetch(domain:docs.python.org)"
    rules = {choice.answer.rule: choice.label for choice in answer_choices("web", "web_fetch", "domain:docs.python.org")}
    assert rules["web_fetch(domain:docs.python.org)"].startswith("Always allow docs.python.org")
