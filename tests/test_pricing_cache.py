"""Cache writes and reads are priced at 1.25x and 0.1x the input price, in the totals and in the /cost text."""

from __future__ import annotations

import pytest

from tui_agent.core.agent.pricing import UsageTotals, api_usage, cost_report, request_usage


def test_cache_tokens_are_priced_at_their_rates() -> None:
    usage = request_usage("claude-sonnet-4-5", input_tokens=1_000_000, output_tokens=0, cache_read_tokens=1_000_000, cache_write_tokens=1_000_000)
    assert usage.cost_usd == pytest.approx(3.0 + 3.0 * 1.25 + 3.0 * 0.1)


def test_the_cost_report_shows_each_kind_of_token_and_what_the_cache_saved() -> None:
    totals = UsageTotals()
    totals.add(request_usage("claude-sonnet-4-5", input_tokens=100, output_tokens=1000, cache_read_tokens=900_000, cache_write_tokens=100_000))
    report = cost_report(totals, "claude-sonnet-4-5")
    assert "cache writes (1.25x)" in report and "100,000 tokens  $0.3750" in report
    assert "cache reads (0.1x)" in report and "900,000 tokens  $0.2700" in report
    assert f"${totals.cost_usd:.4f}" in report and "the cache served 90% of input tokens" in report
    assert "without it this would have cost $3.0153" in report
    assert totals.prompt_tokens == 1_000_100
    assert api_usage(totals) == {"input_tokens": 100, "cache_creation_input_tokens": 100_000, "cache_read_input_tokens": 900_000, "output_tokens": 1000}


def test_a_model_without_a_known_price_says_so() -> None:
    assert "no known price" in cost_report(UsageTotals(), "llama3:8b")
