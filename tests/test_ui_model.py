"""/model lists the Claude models tuiagent knows (its own list, whatever SDK release is installed) and what a custom server offers, and warns about an unknown name."""

from __future__ import annotations

from pathlib import Path

from tests.fake_messages_api import FakeMessagesAPI
from tests.ui_support import SIZE, make_app, ready, wait_until
from tui_agent.core.agent.pricing import KNOWN_MODELS
from tui_agent.ui.model_choice import known_models
from tui_agent.core.runtime_state import agent_of


def notices(app) -> list[str]:  # type: ignore[no-untyped-def]
    return [entry.text for entry in app.conversation.entries if entry.kind == "notice"]


async def send(pilot, app, text: str) -> None:  # type: ignore[no-untyped-def]
    app.prompt_area.insert(text)
    await pilot.press("escape", "enter")  # esc closes the completion menu the "/" opened


async def test_model_lists_sdk_and_server_models_and_warns_on_unknown(repo: Path, api: FakeMessagesAPI) -> None:
    api.models = ["local-llama-70b", "qwen-coder"]
    assert known_models() == list(KNOWN_MODELS) and "claude-sonnet-5-5" in KNOWN_MODELS
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "/model")
        await wait_until(pilot, lambda: any(text.startswith("Model: ") for text in notices(app)), message="the listing")
        listing = next(text for text in notices(app) if text.startswith("Model: "))
        assert f"The server at {api.base_url} offers: local-llama-70b, qwen-coder" in listing
        assert "Claude models tuiagent knows: " + ", ".join(KNOWN_MODELS) in listing
        await send(pilot, app, "/model qwen-coder")
        await wait_until(pilot, lambda: agent_of(app.runtime).model == "qwen-coder", message="the switch")
        await pilot.pause(0.2)
        assert not any("is not a model" in text for text in notices(app))
        await send(pilot, app, "/model claude-sonet-4-5")
        await wait_until(pilot, lambda: any("is not a model tuiagent knows or the server lists" in text for text in notices(app)), message="the warning")
        assert app.header.model == "claude-sonet-4-5"


async def test_a_server_without_a_model_list_says_so(repo: Path, api: FakeMessagesAPI) -> None:
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await send(pilot, app, "/model")
        await wait_until(pilot, lambda: any(text.startswith("Model: ") for text in notices(app)), message="the listing")
        listing = next(text for text in notices(app) if text.startswith("Model: "))
        assert "the server gave no model list (NotFoundError" in listing and "Claude models tuiagent knows:" in listing
        assert "HTTP 404 for GET /v1/models" in listing and "request_id" not in listing  # not the error's whole body
