"""/cost and the header count cached input tokens, priced at the cache rates."""

from __future__ import annotations

from pathlib import Path

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tests.ui_support import SIZE, make_app, ready, turn_answered, wait_until
from tui_agent.core.runtime_state import agent_of


async def test_cost_shows_cache_writes_and_reads_and_the_header_counts_them(repo: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(tool_use("list_files", {"pattern": "*.md"})), reply(text("One file.")))
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.prompt_area.insert("list the markdown files")
        await pilot.press("enter")
        await wait_until(pilot, lambda: turn_answered(app, "One file."), timeout=30, message="the turn")
        usage = agent_of(app.runtime).usage
        assert usage.cache_read_tokens == sum(u.read for u in api.cache_log) > 0
        assert usage.cache_write_tokens == sum(u.write for u in api.cache_log) > 0
        await wait_until(pilot, lambda: app.usage.tokens_in == usage.prompt_tokens, message="the header's token count")
        assert app.usage.cost_usd == usage.cost_usd
        app.prompt_area.insert("/cost")
        await pilot.press("enter")
        await wait_until(pilot, lambda: any("cache reads (0.1x)" in entry.text for entry in app.conversation.entries), message="the /cost report")
        report = next(entry.text for entry in app.conversation.entries if "cache reads (0.1x)" in entry.text)
        assert f"{usage.cache_write_tokens:,} tokens" in report and f"${usage.cost_usd:.4f}" in report
