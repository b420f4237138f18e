"""The prompt cache does its job: over a scripted turn the cache reads at least 90% of the ideal, with at most 4 breakpoints."""

from __future__ import annotations

from pathlib import Path

from tests.cache_scenario import run_turn_for_cache


async def test_a_turn_with_an_authored_tool_reads_90_percent_of_the_ideal_from_the_cache(repo: Path) -> None:
    figures, sent = await run_turn_for_cache(repo, requests=12, tools=40, top_k=10)
    assert figures.finished and figures.requests == 12 and figures.tool_errors == 0
    assert figures.ideal > 12_000  # the scenario shares a lot: tools, system and a growing conversation
    assert figures.ratio >= 0.9, figures
    assert all(request.breakpoints <= 4 for request in sent)
    # the tools array never reshuffles: each request's tools start with the previous request's (one appended: sum_pair)
    for before, after in zip(sent, sent[1:]):
        assert [t["name"] for t in after.tools][: len(before.tools)] == [t["name"] for t in before.tools]
        assert after.system_text == before.system_text
    assert "sum_pair" not in sent[6].tool_names and sent[7].tool_names[-1] == "sum_pair"
    assert "metric_15" not in sent[0].tool_names  # outside the top K, called through call_tool
