"""Extended thinking through the real SDK and the fake API, which signs thinking blocks and refuses what the real API does."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import anthropic
import pytest

from tests.agent_helpers import agent_runtime, of_type, run_turn
from tests.fake_messages_api import FakeMessagesAPI, redacted_thinking, reply, text, thinking, tool_use
from tui_agent.core.agent.sessions import read_events
from tui_agent.core.agent.thinking import ThinkingConfig, ThinkingSettingError, support
from tui_agent.core.events import Notice, TextDelta, ThinkingDelta, TurnFinished

ADAPTIVE_MODEL = "claude-opus-4-6"
LOCAL_MODEL = "qwen2.5-coder:7b"
BUDGET_MODEL = "claude-sonnet-4-5"


def session_records(repo: Path) -> list[dict[str, object]]:
    [path] = (repo / ".agent" / "sessions").glob("*.jsonl")
    return [json.loads(line) for line in path.read_text().splitlines()]


async def test_adaptive_thinking_round_trips_signed_blocks_through_a_tool_loop_and_a_resume(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(thinking("I should read the README first."), text("Reading."), tool_use("read_file", {"path": "README.md"})),
                    reply(thinking("It says hello."), text("The README greets you.")),
                    reply(redacted_thinking("r1"), tool_use("list_files", {"pattern": "*.md"})),
                    reply(text("Listed.")))
        async with agent_runtime(repo, api, model=ADAPTIVE_MODEL) as runtime:
            events = await run_turn(runtime, "what does the README say?")
        async with agent_runtime(repo, api, model=ADAPTIVE_MODEL, continue_latest=True) as runtime:
            resumed = await run_turn(runtime, "and list the markdown files")
    first = api.requests[0].body
    assert first["thinking"] == {"type": "adaptive"} and first["max_tokens"] >= 32_000 and "temperature" not in first
    assert "tool_choice" not in first
    assistant = api.requests[1].body["messages"][1]
    assert assistant["role"] == "assistant" and assistant["content"][0]["type"] == "thinking"
    assert assistant["content"][0]["thinking"] == "I should read the README first." and assistant["content"][0]["signature"]
    assert "".join(e.text for e in of_type(events, ThinkingDelta)) == "I should read the README first.It says hello."
    assert "".join(e.text for e in of_type(events, TextDelta)) == "Reading.The README greets you."
    assert of_type(events, TurnFinished)[-1].text == "The README greets you."
    # the resumed session sends the same signed blocks back (the fake verifies every signature), redacted data too
    resumed_messages = api.requests[2].body["messages"]
    assert resumed_messages[1] == assistant and resumed_messages[3]["content"][0]["type"] == "thinking"
    assert api.requests[3].body["messages"][-2]["content"][0]["type"] == "redacted_thinking"
    assert of_type(resumed, TurnFinished)[-1].text == "Listed."
    saved = [r["message"] for r in session_records(repo) if r.get("type") == "message" and r["message"]["role"] == "assistant"]
    assert saved[0]["content"][0] == assistant["content"][0]  # the session file keeps the block verbatim, signature included
    [path] = (repo / ".agent" / "sessions").glob("*.jsonl")
    decoded = read_events(path)
    assert not decoded.problems and any(isinstance(event, ThinkingDelta) for event in decoded.events)


async def test_a_local_model_gets_no_thinking_and_off_turns_it_off(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(thinking("never sent"), text("hi")), reply(text("hi again")))
        async with agent_runtime(repo, api, model=LOCAL_MODEL) as runtime:
            events = await run_turn(runtime, "hello")
        (repo / ".agent" / "config.toml").write_text('[agent]\nthinking = "off"\n')
        async with agent_runtime(repo, api, model=ADAPTIVE_MODEL) as runtime:
            await run_turn(runtime, "hello")
    assert "thinking" not in api.requests[0].body and "output_config" not in api.requests[0].body
    assert api.requests[0].body["max_tokens"] == 8192 and not of_type(events, ThinkingDelta)
    assert "thinking" not in api.requests[1].body


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # the SDK warns of the older model's end of life
async def test_budget_and_effort_from_the_config_obey_the_budget_rule(repo: Path) -> None:
    (repo / ".agent").mkdir(exist_ok=True)
    (repo / ".agent" / "config.toml").write_text('[agent]\nthinking = "16000"\neffort = "low"\n')
    with FakeMessagesAPI() as api:
        api.enqueue(reply(thinking("budgeted"), tool_use("read_file", {"path": "README.md"})), reply(text("done")),
                    reply(text("adaptive instead")))
        async with agent_runtime(repo, api, model=BUDGET_MODEL) as runtime:
            events = await run_turn(runtime, "go")
        async with agent_runtime(repo, api, model=ADAPTIVE_MODEL) as runtime:
            adaptive = await run_turn(runtime, "go")
    body = api.requests[0].body
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 16000} and body["max_tokens"] > 16000
    assert body["output_config"] == {"effort": "low"}
    assert api.requests[1].body["messages"][1]["content"][0]["type"] == "thinking" and of_type(events, TurnFinished)
    # a model that thinks adaptively gets adaptive thinking (fixed budgets are deprecated for it), and the person is told
    assert api.requests[2].body["thinking"] == {"type": "adaptive"}
    assert any("thinks adaptively" in e.message for e in of_type(adaptive, Notice))


async def test_the_thinking_flag_overrides_the_config_and_a_bad_config_value_says_so(repo: Path) -> None:
    (repo / ".agent").mkdir(exist_ok=True)
    (repo / ".agent" / "config.toml").write_text('[agent]\nthinking = "sometimes"\n')
    with FakeMessagesAPI() as api:
        api.enqueue(reply(text("a")), reply(text("b")))
        async with agent_runtime(repo, api, model=ADAPTIVE_MODEL) as runtime:
            events = await run_turn(runtime, "go")
        async with agent_runtime(repo, api, model=ADAPTIVE_MODEL, thinking="off", effort="max") as runtime:
            await run_turn(runtime, "go")
    assert any("sometimes" in e.message and e.level == "warning" for e in of_type(events, Notice))
    assert api.requests[0].body["thinking"] == {"type": "adaptive"}
    assert "thinking" not in api.requests[1].body and api.requests[1].body["output_config"] == {"effort": "max"}


def test_the_cli_flags_are_validated_and_reach_the_agent() -> None:
    from tui_agent.cli import build_parser
    from tui_agent.commands.failures import UsageFailure
    from tui_agent.ui.launch import launch_options

    parser = build_parser()
    args = parser.parse_args(["--thinking", "4096", "--effort", "high"])
    assert (args.thinking, args.effort) == ("4096", "high")
    assert launch_options(args).extra == {"thinking": "4096", "effort": "high"}  # the TUI passes them to open_runtime
    assert launch_options(parser.parse_args([])).extra == {}
    with pytest.raises(UsageFailure, match="at least 1024"):
        parser.parse_args(["--thinking", "12"])
    with pytest.raises(UsageFailure, match="extreme"):
        parser.parse_args(["--effort", "extreme"])


def test_model_support_and_request_params() -> None:
    assert support("claude-opus-4-6") == support("claude-sonnet-4-6") == support("claude-opus-5") == "adaptive"
    assert support("claude-sonnet-4-5-20250929") == support("claude-3-7-sonnet-latest") == "budget"
    assert support(LOCAL_MODEL) is None and support("claude-3-5-haiku-latest") is None
    assert ThinkingConfig().request_params(LOCAL_MODEL, 8192) == ({}, 8192)
    assert ThinkingConfig().request_params("claude-sonnet-4-5", 8192) == ({}, 8192)  # auto: adaptive models only
    params, _ = ThinkingConfig("adaptive").request_params("claude-sonnet-4-5", 8192)
    assert params["thinking"]["type"] == "enabled"  # an older thinking model asked to think gets the budget form
    params, max_tokens = ThinkingConfig("budget", 30_000).request_params(BUDGET_MODEL, 8192)
    assert params["thinking"]["budget_tokens"] == 30_000 < max_tokens
    with pytest.raises(ThinkingSettingError):
        ThinkingConfig.parse("500")
    with pytest.raises(ThinkingSettingError):
        ThinkingConfig.parse("adaptive", "extreme")


def _sdk(api: FakeMessagesAPI) -> anthropic.Anthropic:
    return anthropic.Anthropic(api_key="k", base_url=api.base_url, max_retries=0)


@pytest.mark.filterwarnings("ignore:Using Claude with:UserWarning")  # the SDK's own: the budget form is sent on purpose
def test_the_fake_api_refuses_what_the_real_api_refuses_with_thinking() -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(thinking("plan"), tool_use("read_file", {"path": "a"}, id="toolu_1")))
        client = _sdk(api)
        base = {"model": ADAPTIVE_MODEL, "max_tokens": 2048, "thinking": {"type": "adaptive"}}
        first = client.messages.create(messages=[{"role": "user", "content": "hi"}], **base)  # type: ignore[call-overload]
        block = first.content[0].model_dump()
        assert block["type"] == "thinking" and block["signature"]
        call = first.content[1].model_dump()
        result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}]}
        cases = [
            ({**base, "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [{**block, "thinking": "plan!"}, call]}, result]},
             "Invalid `signature` in `thinking` block"),
            ({**base, "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [call]}, result]},
             "Expected `thinking` or `redacted_thinking`, but found `tool_use`"),
            ({**base, "tool_choice": {"type": "any"}, "messages": [{"role": "user", "content": "hi"}]},
             "Thinking may not be enabled when tool_choice forces tool use."),
            ({**base, "extra_body": {"temperature": 0.2}, "messages": [{"role": "user", "content": "hi"}]},
             "`temperature` may only be set to 1 when thinking is enabled"),
            ({**base, "thinking": {"type": "enabled", "budget_tokens": 4096}, "messages": [{"role": "user", "content": "hi"}]},
             "`max_tokens` must be greater than `thinking.budget_tokens`"),
            ({"model": ADAPTIVE_MODEL, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [block]}]},
             "When thinking is disabled, an `assistant` message in the final position cannot contain `thinking`"),
        ]
        for body, message in cases:
            with pytest.raises(anthropic.BadRequestError, match=re.escape(message)):
                client.messages.create(**body)  # type: ignore[call-overload]
        assert len(api.take_violations()) == len(cases)
        api.enqueue(reply(text("ok")))
        fine = client.messages.create(**{**base, "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [block, call]}, result]})  # type: ignore[call-overload]
        assert fine.content[0].model_dump()["text"] == "ok"


def test_headless_text_leaves_thinking_out_and_stream_json_carries_it(repo: Path, api: FakeMessagesAPI,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    from tui_agent.cli import main

    api.enqueue(reply(thinking("secret musing"), text("Plain answer.")))
    assert main(["--project", str(repo), "--model", ADAPTIVE_MODEL, "-p", "hi"]) == 0
    assert capsys.readouterr().out == "Plain answer.\n"
    api.enqueue(reply(thinking("visible musing"), text("Streamed answer.")))
    assert main(["--project", str(repo), "--model", ADAPTIVE_MODEL, "-p", "hi", "--output-format", "stream-json",
                 "--thinking", "adaptive", "--effort", "high"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    content = next(line for line in lines if line["type"] == "assistant")["message"]["content"]
    assert content[0]["type"] == "thinking" and content[0]["thinking"] == "visible musing" and content[0]["signature"]
    assert api.requests[-1].body["output_config"] == {"effort": "high"}
    assert "TUIAGENT_THINKING" not in os.environ and "TUIAGENT_EFFORT" not in os.environ  # a parameter, not a side channel
    api.enqueue(reply(text("No effort sent.")))
    assert main(["--project", str(repo), "--model", ADAPTIVE_MODEL, "-p", "hi"]) == 0  # the flag of one run stays there
    assert "output_config" not in api.requests[-1].body


async def test_a_session_resumed_on_a_local_model_leaves_the_thinking_blocks_out(repo: Path) -> None:
    with FakeMessagesAPI() as api:
        api.enqueue(reply(thinking("only for Claude"), text("first")), reply(redacted_thinking(), text("second")), reply(text("local")))
        async with agent_runtime(repo, api, model=ADAPTIVE_MODEL) as runtime:
            await run_turn(runtime, "one")
            await run_turn(runtime, "two")
        async with agent_runtime(repo, api, model=LOCAL_MODEL, continue_latest=True) as runtime:
            await run_turn(runtime, "three")
    assert api.requests[1].body["messages"][1]["content"][0]["type"] == "thinking"  # Claude gets them back
    assert api.requests[2].body["model"] == LOCAL_MODEL, api.requests[2].body.get("thinking")
    sent = json.dumps(api.requests[2].body["messages"])
    assert '"thinking"' not in sent and "redacted_thinking" not in sent and '"first"' in sent and '"second"' in sent
