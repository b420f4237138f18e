"""The session's shared state (usage, busy, branch, model, loading, permission mode) lives in app reactives the header
is bound to, and the header's token figures come from one formula."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.fake_messages_api import reply, text
from tests.scripted_model import ScriptedModel
from tests.test_ui_turn import send
from tests.ui_support import SIZE, approved_bang, make_app, ready, turn_answered, wait_until
from tui_agent.ui.context_usage import UsageFigures, usage_figures
from tui_agent.ui.screens.confirm import ConfirmScreen

UI = Path(__file__).resolve().parent.parent / "tui_agent" / "ui"
BOUND = {"model", "branch", "busy", "still_loading", "usage", "permission_mode", "sandbox_tier", "mcp", "mcp_failed"}


@pytest.fixture
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)


async def test_the_header_follows_the_apps_state_even_under_a_modal(repo: Path, no_model: None) -> None:
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        app.push_screen(ConfirmScreen("a question", yes="Yes", no="No"))
        await pilot.pause()
        app.usage, app.busy, app.branch, app.model, app.loading = UsageFigures(12_400, 3_100, 0.5, 42), True, "topic", "m-1", "tools"
        app.permission_mode = "auto"
        await pilot.pause()
        app.pop_screen()
        await pilot.pause()
        header = app.header
        assert (header.usage, header.busy, header.branch, header.model, header.still_loading, header.permission_mode) == (
            UsageFigures(12_400, 3_100, 0.5, 42), True, "topic", "m-1", "tools", "auto")
        line = header.render().plain
        assert "12.4k in / 3.1k out" in line and "$0.5000" in line and "ctx 42%" in line and "topic" in line


async def test_after_a_turn_and_after_resume_the_figures_are_the_agents_totals(repo: Path, scripted: ScriptedModel) -> None:
    scripted.enqueue(reply(text("One."), usage={"input_tokens": 50_000, "output_tokens": 5}))
    app = make_app(repo, client=scripted)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "hello")
        await wait_until(pilot, lambda: turn_answered(app, "One."), timeout=30, message="the reply")
        agent = app.runtime.agent  # type: ignore[union-attr]
        assert agent is not None and agent.usage.cache_read_tokens + agent.usage.cache_write_tokens + agent.usage.input_tokens > 0
        after_turn = app.usage
        assert after_turn == usage_figures(agent.usage, after_turn.context_percent) and after_turn.context_percent >= 25
        session_id = app.runtime.core.session.id  # type: ignore[union-attr]
        await send(pilot, app, "/clear")
        await wait_until(pilot, lambda: app.usage == UsageFigures(), message="cleared figures")
        await send(pilot, app, f"/resume {session_id}")
        await wait_until(pilot, lambda: app.usage.tokens_in == after_turn.tokens_in, timeout=20, message="the resumed figures")
        # the context as the session's last request filled it (system prompt and tools included), not re-estimated
        assert app.usage == after_turn == usage_figures(agent.usage, after_turn.context_percent)
    reopened = make_app(repo, client=scripted, resume=session_id)  # and when tuiagent starts with --resume
    async with reopened.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: reopened.usage.tokens_in == after_turn.tokens_in, timeout=20, message="the figures at start")
        assert reopened.usage.context_percent == after_turn.context_percent


def test_no_ui_module_writes_the_headers_bound_fields() -> None:
    """They are the app's: a write to the widget would be overwritten by the binding (and was how the token figures
    came to be written from three places)."""
    writes = [f"{path.relative_to(UI)}:{node.lineno}" for path in UI.rglob("*.py") for node in ast.walk(ast.parse(path.read_text()))
              if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) and node.attr in BOUND
              and ((isinstance(node.value, ast.Attribute) and node.value.attr == "header")
                   or (isinstance(node.value, ast.Name) and node.value.id == "header"))]
    assert writes == []


async def test_core_events_published_on_another_thread_arrive_as_messages(repo: Path, no_model: None) -> None:
    """The change feed's listener posts a CoreEvent message to the app (thread-safe); the branch it carries lands in the
    app's state and the header."""
    import asyncio

    from tui_agent.core.events import BranchChanged
    from tui_agent.ui.catalog_sync import CoreEvent

    app = make_app(repo)
    received: list[CoreEvent] = []
    async with app.run_test(size=SIZE, message_hook=lambda message: received.append(message) if isinstance(message, CoreEvent) else None) as pilot:
        await ready(pilot)
        assert app.runtime is not None
        await asyncio.to_thread(app.runtime.core.changes.publish, BranchChanged("elsewhere"))
        await wait_until(pilot, lambda: app.branch == "elsewhere" and app.header.branch == "elsewhere", message="the branch")
        assert [message.event for message in received if isinstance(message.event, BranchChanged)] == [BranchChanged("elsewhere")]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_while_a_run_goes_on_the_header_says_esc_stops_it_and_the_footer_still_fits(repo: Path, size: tuple[int, int]) -> None:
    """The busy mark is the header's ("● esc", "● working (esc cancels)"): the footer keeps the pane's keys and never
    grows past the screen (an "esc Cancel turn" key there overran the catalog's keys at 80 and 120 columns)."""
    from textual.widgets import Footer
    from textual.widgets._footer import FooterKey

    app = make_app(repo, sandbox_tier="rlimits", trust_project=True)
    async with app.run_test(size=size) as pilot:
        await ready(pilot)
        await wait_until(pilot, lambda: bool(app.screen.query(FooterKey)), message="the footer")
        entry = await approved_bang(pilot, app, "echo started; sleep 60")
        await wait_until(pilot, lambda: "started" in entry.live, timeout=30, message="the command running")
        app.action_show_pane("catalog")
        await pilot.pause(0.3)
        footer = app.screen.query_one(Footer)
        assert app.busy and footer.virtual_size.width <= footer.size.width, (footer.virtual_size, footer.size)
        assert not any(key.action == "cancel_turn" for key in footer.query(FooterKey))
        header = str(app.query_one("#header").render())
        assert ("● esc" in header) if size[0] == 80 else ("● esc" in header or "esc cancels" in header), header
        await pilot.press("escape")
        await wait_until(pilot, lambda: entry.result is not None and not app.busy, timeout=10, message="the command stopped")
