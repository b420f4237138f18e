"""The catalog doctor's rules on records as the catalog reports them (usage ages, duplicates, budget)."""

from __future__ import annotations

from tui_agent.core.catalog.models import ToolRecord, ToolSpec, ToolTest
from tui_agent.core.tending.doctor import DAY, DoctorInput, examine, summary

NOW = 1_800_000_000.0


def record(name: str, *, calls: int = 1, last_used: float | None = NOW, description: str = "", status: str = "ok",
           tests: bool = True) -> ToolRecord:
    spec = ToolSpec(name, description or f"Tool {name}.", {"type": "object"}, "sha",
                    tests=(ToolTest(f"test_{name}", True),) if tests else ())
    return ToolRecord(name, status, spec, calls=calls, last_used=last_used)


def findings(*records: ToolRecord, index_tokens: int = 100, budget: int = 2000, days: int = 30) -> set[tuple[str, tuple[str, ...]]]:
    data = DoctorInput(records, source=lambda name: f"# {name}\n", authored_at=lambda name: NOW - 90 * DAY,
                       index_tokens=index_tokens, token_budget=budget, unused_days=days, now=NOW)
    return {(finding.kind, finding.tools) for finding in examine(data)}


def test_unused_is_measured_against_the_configured_days() -> None:
    stale = record("parse_logs", last_used=NOW - 45 * DAY, description="Parse the logs.")
    assert ("unused", ("parse_logs",)) in findings(stale)
    assert ("unused", ("parse_logs",)) not in findings(stale, days=60)
    assert findings(record("fresh_tool", last_used=NOW - DAY, description="Fresh.")) == set()


def test_near_duplicates_by_description_and_none_for_distinct_tools() -> None:
    a = record("count_lines", description="Count the lines of a file in the project.")
    b = record("line_total", description="Count the lines of a file in the project tree.")
    c = record("deploy_status", description="Which deploys failed this week.")
    found = findings(a, b, c)
    assert ("near-duplicate", ("count_lines", "line_total")) in found
    assert not {pair for kind, pair in found if kind == "near-duplicate" and "deploy_status" in pair}


def test_drifted_failing_asks_for_repair_and_the_budget_warns_when_nearly_full() -> None:
    drifted = record("greeting", status="drifted · failing", description="Greeting.")
    found = findings(drifted, index_tokens=1900)
    assert ("drifted", ("greeting",)) in found and ("budget", ()) in found
    data = DoctorInput([drifted], source=lambda n: "", authored_at=lambda n: None, index_tokens=500, token_budget=2000, now=NOW)
    assert summary(data, examine(data)) | {"budget_share": 0.25} == summary(data, examine(data))
    assert summary(data, examine(data))["drifted"] == 1
