"""`tuiagent sandbox status` lists the host doors (git, project files, the apply step, the network, MCP servers) and
what each refuses, read from the constants of the modules that enforce them: changing a constant changes the line."""

from __future__ import annotations

import ipaddress
import json
from pathlib import Path

import pytest

from tui_agent.core import projectfs
from tui_agent.cli import main
from tui_agent.core.mcp import coverage
from tui_agent.core.sandbox import describe, protected
from tui_agent.core.network.policy import NetPolicy
from tui_agent.core.versioning.gitconfigscan import neutral_value

DOORS = ["git processes", "project files", "apply step", "network", "mcp servers"]


def status(repo: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> str:
    capsys.readouterr()
    assert main(["--project", str(repo), "sandbox", "status", "--tier", "rlimits", *flags]) == 0
    return capsys.readouterr().out


def test_sandbox_status_lists_each_host_door_and_what_it_refuses(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doors = json.loads(status(repo, capsys, "--json"))["host_doors"]
    assert list(doors) == DOORS
    assert all(name in doors["apply step"] for name in protected.GIT_READ_ONLY)
    assert "setuid and setgid" in doors["apply step"] and "FIFO, device node, socket" in doors["apply step"]
    assert "bubblewrap tier only" in doors["network"] and "bubblewrap tier only" in doors["apply step"]
    assert all(kind in doors["network"] for kind in ("a loopback address", "a private address", "a link-local address"))
    text = status(repo, capsys)
    assert "host doors (tuiagent's own code between the project and this machine) and what each refuses:" in text
    assert any(line.strip().startswith("mcp servers") and "2000 files" in line for line in text.splitlines())


def test_each_line_is_read_from_the_enforcing_modules_constants(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(coverage, "MAX_FILES", 7)
    monkeypatch.setattr(protected, "GIT_READ_ONLY", ("config", "planted-door"))
    doors = describe.host_doors(True)
    assert "over 7 files" in doors["mcp servers"] and ".git/planted-door" in doors["apply step"]
    assert "bubblewrap tier only" not in doors["network"]


def test_the_git_door_lists_only_keys_it_really_neutralises() -> None:
    keys = describe.git_neutralised_keys()
    assert "core.fsmonitor" in keys and "filter.*.clean" in keys and len(keys) > 20
    for key in keys:
        assert neutral_value(key.replace("*", "x"), "!touch /tmp/pwned") is not None, key
    assert f"{len(keys)} command-running keys" in describe.host_doors(True)["git processes"]


def test_the_network_line_names_what_the_proxy_policy_refuses() -> None:
    policy = NetPolicy(True)
    line = describe.host_doors(True)["network"]
    for probe in describe.NETWORK_PROBES:
        reason = policy.address_refusal(ipaddress.ip_address(probe))
        assert reason is not None and reason in line, probe



def test_the_project_files_line_is_the_doors_own_words() -> None:
    assert describe.host_doors(True)["project files"] == projectfs.REFUSES
