"""Issue 33: a network grant reaches granted public names through the host's proxy, never the host. Checked by effect
against a fake internet host in a network namespace the test makes (tests/net_scenario.py) and against listeners on
that namespace's loopback and own address: what each listener heard, not what the proxy said it did."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tui_agent.core.sandbox.launch import probe_bubblewrap

ROOT = Path(__file__).resolve().parents[1]


def _unavailable() -> str | None:
    for tool in ("unshare", "nsenter", "ip", "openssl", "git"):
        if shutil.which(tool) is None:
            return f"{tool} is not installed (.ci/run installs it)"
    if probe_bubblewrap() is not None:
        return f"bubblewrap does not work here: {probe_bubblewrap()}"
    done = subprocess.run(["unshare", "-rnm", "true"], capture_output=True, timeout=10)
    return None if done.returncode == 0 else f"unshare -rnm fails here: {done.stderr.decode().strip()}"


@pytest.fixture(scope="module")
def net(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    reason = _unavailable()
    if reason is not None:
        pytest.skip(reason)
    work = tmp_path_factory.mktemp("net")
    done = subprocess.run(["unshare", "-rnm", sys.executable, "-m", "tests.net_scenario", str(work)], cwd=ROOT,
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    results: dict[str, Any] = json.loads(done.stdout)
    return results


def _log(net: dict[str, Any], tag: str) -> list[str]:
    return [line for line in net["internet_log"] if tag in line]


def _refused(answer: str, *words: str) -> bool:
    return answer.startswith("HTTP/1.1 403") and all(word in answer for word in words)


def test_the_listeners_hear_a_client_outside_the_sandbox(net: dict[str, Any]) -> None:
    """The positive control: each listener the probes must not reach answers a client of this namespace."""
    assert "GET /control HTTP/1.0" in net["loopback_heard"] and "GET /control HTTP/1.0" in net["own_heard"]
    assert _log(net, "10.77.0.2 10.77.0.2 /control")


def test_the_host_loopback_is_unreachable_with_any_grant(net: dict[str, Any]) -> None:
    probes = net["any"]
    assert all(not line.startswith("GET /loopback") and not line.startswith("GET /localhost")
               for line in net["loopback_heard"]), net["loopback_heard"]
    assert probes["loopback_direct"].startswith("failed")
    for key in ("loopback_forward", "loopback_connect", "loopback_mapped", "loopback_decimal"):
        assert _refused(probes[key], "loopback address"), (key, probes[key])
    assert "tuiagent network proxy refused: 127.0.0.1 is a loopback address" in net["any_stderr"]


def test_a_name_resolving_to_loopback_is_refused_even_when_granted(net: dict[str, Any]) -> None:
    assert not any("sneaky" in line for line in net["loopback_heard"]), net["loopback_heard"]
    assert _refused(net["any"]["localhost_connect"], "localhost resolves to", "loopback address")
    assert net["any"]["localhost_socks"] == "socks 2"  # SOCKS5: "connection not allowed by ruleset"
    for key in ("sneaky_forward", "sneaky_connect"):
        assert _refused(net["named"][key], "sneaky.example.org resolves to 127.0.0.1, a loopback address")
    assert net["named"]["sneaky_direct"].startswith("failed")


def test_the_hosts_own_address_is_unreachable(net: dict[str, Any]) -> None:
    """198.18.0.2 is in the test-only public range, so only the own-address rule refuses it."""
    assert not any("own" in line or "self" in line for line in net["own_heard"]), net["own_heard"]
    assert _refused(net["any"]["own_connect"], "198.18.0.2 is an address of this machine")
    assert _refused(net["named"]["self_name"], "self.example.org resolves to 198.18.0.2, an address of this machine")
    assert net["any"]["own_direct"].startswith("failed")


def test_a_private_address_and_a_name_resolving_to_one_are_unreachable(net: dict[str, Any]) -> None:
    assert not _log(net, "10.77.0.2 10.77.0.2 /private") and not _log(net, "/lan-name"), net["internet_log"]
    assert _refused(net["any"]["private_forward"], "10.77.0.2 is a private address")
    assert _refused(net["any"]["lan_name"], "lan.example.org resolves to 10.77.0.2, a private address")
    assert _refused(net["named"]["lan_name"], "a private address")
    assert net["any"]["private_direct"].startswith("failed")


def test_a_name_outside_the_grant_is_refused(net: dict[str, Any]) -> None:
    assert not _log(net, "other.example.net") and not _log(net, "/outside"), net["internet_log"]
    named = net["named"]
    for key in ("outside_forward", "outside_connect"):
        assert _refused(named[key], "other.example.net is not in the network grant (only files.example.org"), named[key]
    assert named["outside_socks"] == "socks 2"
    assert _refused(named["literal_outside_names"], "198.18.0.1 is not in the network grant")
    assert named["outside_direct"].startswith("failed") and named["files_direct"].startswith("failed")
    assert not _log(net, "/direct-files")
    # A plain-HTTP request to a granted name goes with that name as its Host, not another one the server answers for.
    assert named["outside_host_header"].startswith("HTTP/1.0 404")
    assert _log(net, "198.18.0.1 files.example.org /host-header")


def test_granted_names_are_reached_through_the_proxy(net: dict[str, Any]) -> None:
    named = net["named"]
    assert named["files_forward"] == "HTTP/1.0 200 OK | hello from the fake internet"
    assert named["files_https"] == "200"  # HTTPS_PROXY: a CONNECT tunnel
    assert named["wildcard"] == "HTTP/1.0 200 OK | hello from the fake internet"  # *.cdn.example.org
    assert named["files_socks"].startswith("socks 0 HTTP/1.0")
    assert _log(net, "198.18.0.1 a.cdn.example.org /hello.txt") and _log(net, "files.example.org /socks-files")
    assert net["any"]["public_literal"] == "HTTP/1.0 200 OK | hello from the fake internet"


def test_pip_install_and_git_clone_over_https_work_with_a_name_grant(net: dict[str, Any]) -> None:
    tools = net["tools"]
    assert tools["env"] == "http://127.0.0.1:3128"
    assert tools["pip"].startswith("0 installed through the proxy"), tools["pip"]
    assert tools["git"].startswith("0 cloned through the proxy"), tools["git"]
    assert _log(net, "files.example.org /simple/tinynetpkg/tinynetpkg-1.0-py3-none-any.whl")


def test_a_host_side_fetch_is_held_to_the_same_grant(net: dict[str, Any]) -> None:
    """network/policy.fetch (web_fetch's way out): the checks hold on the host too, redirects included."""
    fetched = net["fetch"]
    assert fetched["https"] == "200 hello from the fake internet"
    assert fetched["loopback"] == "refused: localhost resolves to ::1, a loopback address" or \
        fetched["loopback"] == "refused: localhost resolves to 127.0.0.1, a loopback address"
    assert fetched["outside"] == "refused: other.example.net is not in the network grant (only files.example.org)"
    assert fetched["redirect"] == "refused: sneaky.example.org resolves to 127.0.0.1, a loopback address"
    assert not any("fetch" in line for line in net["loopback_heard"]) and not _log(net, "fetch-outside")
