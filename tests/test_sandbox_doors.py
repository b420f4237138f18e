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
from tui_agent.commands import sandbox_status
from tui_agent.core.sandbox import protected
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
    doors = sandbox_status.host_doors(True, True)
    assert "over 7 files" in doors["mcp servers"] and ".git/planted-door" in doors["apply step"]
    assert "bubblewrap tier only" not in doors["network"]


def test_the_git_door_lists_only_keys_it_really_neutralises() -> None:
    keys = sandbox_status.git_neutralised_keys()
    assert "core.fsmonitor" in keys and "filter.*.clean" in keys and len(keys) > 20
    for key in keys:
        assert neutral_value(key.replace("*", "x"), "!touch /tmp/pwned") is not None, key
    assert f"{len(keys)} command-running keys" in sandbox_status.host_doors(True, True)["git processes"]


def test_the_network_line_names_what_the_proxy_policy_refuses() -> None:
    policy = NetPolicy(True)
    line = sandbox_status.host_doors(True, True)["network"]
    for probe in sandbox_status.NETWORK_PROBES:
        reason = policy.address_refusal(ipaddress.ip_address(probe))
        assert reason is not None and reason in line, probe



def test_the_project_files_line_is_the_doors_own_words() -> None:
    assert sandbox_status.host_doors(True, True)["project files"] == projectfs.REFUSES


async def test_the_after_run_sweep_is_said_only_of_runs_without_an_overlay(repo: Path) -> None:
    """Through an overlay a protected path a run creates never reaches the project (the apply step refuses it and
    copies it to the quarantine); only a run without one (the rlimits tier, no overlay mount) is swept after it."""
    from tui_agent.core.project import Project
    from tui_agent.core.sandbox import Sandbox
    from tui_agent.core.sandbox.launch import probe_bubblewrap

    if probe_bubblewrap() is not None:
        pytest.skip("needs bubblewrap")
    project = Project.at(repo)
    project.ensure_layout()
    for tier in ("bubblewrap", "rlimits"):
        box = await Sandbox.start(project, tier=tier, warm_workers=0)
        await box.aclose()
        if tier == "bubblewrap" and box.runs.overlay_problem is not None:
            pytest.skip(f"no overlay here: {box.runs.overlay_problem}")
        swept = [miss for miss in sandbox_status.describe(box)["expected_misses"] if "right after a run" in miss]
        assert (swept == []) == (tier == "bubblewrap"), (tier, swept)
        if tier == "bubblewrap":
            info = sandbox_status.describe(box)
            assert "the apply step refuses it and copies it to .agent/quarantine/" in info["protections"]["read_only_in_project"]
            assert "right after the run" not in info["protections"]["read_only_in_project"]
            box.runs.overlay_problem = "no overlay mount (forced)"
            info = sandbox_status.describe(box)
            assert "right after the run" in info["protections"]["read_only_in_project"]
            assert any("without an overlay" in miss for miss in info["expected_misses"])
            assert "none can be mounted here" in info["host_doors"]["apply step"]
