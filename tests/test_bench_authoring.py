"""The authoring-pays benchmark runs end to end on the scripted analyst (real runtime, sandbox, SDK, fake API)."""

from __future__ import annotations

import pytest

from benchmarks.bench_authoring import main


def test_the_benchmark_reports_both_conditions_side_by_side(capsys: pytest.CaptureFixture[str]) -> None:
    on, off = main(["--scripted", "--services", "3", "--runs", "4"])
    assert (on.condition, off.condition) == ("authoring on", "authoring off")
    assert on.solved == off.solved == 3  # the answers come from the tool results the scripted model was sent
    # by hand: list + read + answer per task; authored: the first task by hand plus create_tool + call, then one call each
    assert off.tool_calls == 3 * (1 + 4) and on.tool_calls == (1 + 4 + 1 + 1) + 2 * 1
    assert off.requests == 3 * 3 and on.requests == 5 + 2 * 2
    assert on.tokens > 0 and off.tokens > 0
    table = capsys.readouterr().out
    assert "authoring on" in table and "authoring off" in table and "3/3" in table
