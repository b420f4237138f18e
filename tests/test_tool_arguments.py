"""Tool arguments are checked against the tool's schema before anything runs: `tools run` and model calls alike."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, of_type, run_turn
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use, tool_use_raw
from tui_agent.cli import main
from tui_agent.core.catalog.argcheck import check_arguments
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.events import ToolCallFinished
from tui_agent.core.runtime_state import catalog_of

SCHEMA = {"type": "object", "required": ["x"], "properties": {
    "x": {"type": "integer"}, "ratio": {"type": "number"}, "mode": {"type": "string", "enum": ["fast", "slow"]},
    "tags": {"type": "array", "items": {"type": "string"}}, "note": {"type": ["string", "null"]},
    "weights": {"type": "object", "additionalProperties": {"type": "number"}}}}


@pytest.mark.parametrize("args,message", [
    ({}, "f is missing required argument(s) x"),
    ({"x": 1, "y": 2}, "f has no argument(s) y; it takes: x, ratio, mode, tags, note, weights"),
    ({"x": "abc"}, "f: argument 'x' must be an integer, not the string 'abc'"),
    ({"x": True}, "f: argument 'x' must be an integer, not the boolean true"),
    ({"x": 1.5}, "f: argument 'x' must be an integer, not the number 1.5"),
    ({"x": float("inf")}, "f: argument 'x' must be a finite number, not inf"),
    ({"x": 1, "ratio": float("nan")}, "f: argument 'ratio' must be a finite number, not nan"),
    ({"x": 1, "mode": "medium"}, "f: argument 'mode' must be one of 'fast', 'slow', not the string 'medium'"),
    ({"x": 1, "tags": ["a", 3]}, "f: argument 'tags'[1] must be a string, not the number 3"),
    ({"x": 1, "note": 4}, "f: argument 'note' must be a string or null, not the number 4"),
    ({"x": 1, "weights": {"a": "heavy"}}, "f: argument 'weights'['a'] must be a number, not the string 'heavy'"),
    ([1], "f takes an object of named arguments, not a list of 1"),
    ({"x": 10 ** 5000}, "f: argument 'x' is too large an integer"),
])
def test_each_bad_call_gets_a_precise_message(args: object, message: str) -> None:
    with pytest.raises(PipelineError) as caught:
        check_arguments("f", SCHEMA, args)
    assert caught.value.stage == "arguments" and caught.value.message.startswith(message), caught.value.message


def test_good_calls_pass_and_integral_numbers_become_ints() -> None:
    checked = check_arguments("f", SCHEMA, {"x": 3.0, "ratio": 2, "mode": "fast", "tags": [], "note": None, "weights": {"a": 1.5}})
    assert checked == {"x": 3, "ratio": 2, "mode": "fast", "tags": [], "note": None, "weights": {"a": 1.5}}
    assert type(checked["x"]) is int


def refusal(name: str, schema: dict[str, object], args: object) -> str:
    with pytest.raises(PipelineError) as caught:
        check_arguments(name, schema, args)
    assert caught.value.stage == "arguments"
    return caught.value.message


def test_the_rest_of_json_schema_is_checked_with_the_path_and_the_reason() -> None:
    schema: dict[str, object] = {"type": "object", "properties": {
        "n": {"type": "integer", "minimum": 1, "maximum": 9}, "word": {"type": "string", "maxLength": 3, "pattern": "^[a-z]+$"},
        "pick": {"anyOf": [{"type": "integer"}, {"type": "array", "items": {"type": "integer"}}]},
        "rows": {"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}, "required": ["id"]}}}}
    assert refusal("g", schema, {"n": 0}) == "g: argument 'n' must be at least 1, not 0"
    assert refusal("g", schema, {"n": 3, "word": "abcd"}) == "g: argument 'word' must be at most 3 characters, not 4"
    assert refusal("g", schema, {"pick": "one"}) == \
        "g: argument 'pick' must be an integer, not the string 'one'; or must be a list, not the string 'one'"
    assert refusal("g", schema, {"word": "AB"}) == "g: argument 'word' is invalid: 'AB' does not match '^[a-z]+$'"
    assert refusal("g", schema, {"rows": [{"id": 1}, {}]}) == "g: argument 'rows'[1] is invalid: 'id' is a required property"
    assert check_arguments("g", schema, {"pick": [2.0, 3], "rows": [{"id": 4.0}]}) == {"pick": [2, 3], "rows": [{"id": 4}]}


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"x": {"type": 5}}},
    {"type": "object", "properties": {"x": {"$ref": "https://example.com/elsewhere.json"}}},
    {"type": "object", "properties": {"x": {"$ref": "#/properties/x"}}},
])
def test_a_broken_schema_is_named_as_the_fault(schema: dict[str, object]) -> None:
    assert refusal("h", schema, {"x": 1}).startswith("h's input schema is not a usable JSON schema")


TOOL = '''def scale(x: int, factor: float = 2.0) -> float:
    """Scale a number, and leave a mark that it ran.

    Args:
        x: the number
        factor: the factor
    """
    import pathlib
    pathlib.Path("/tmp").exists()
    return x * factor
'''


def write_tool(repo: Path, name: str = "scale", source: str = TOOL, prefix: bytes = b"") -> None:
    tools = repo / ".agent" / "tools"
    tools.mkdir(parents=True, exist_ok=True)
    (tools / f"{name}.py").write_bytes(prefix + source.encode())


def cli(capsys: pytest.CaptureFixture[str], repo: Path, *argv: str) -> tuple[int, str, str]:
    code = main(["--project", str(repo), "tools", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_tools_run_refuses_bad_arguments_before_running(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tool(repo)
    code, _, err = cli(capsys, repo, "run", "scale", "--arg", "x=abc")
    assert code == 1 and "tuiagent: arguments: scale: argument 'x' must be an integer, not the string 'abc'" in err
    code, out, _ = cli(capsys, repo, "run", "scale", "--args", '{"x": 1e400}', "--json")
    failure = json.loads(out)
    assert code == 1 and failure["stage"] == "arguments" and "must be a finite number, not inf" in failure["error"]
    code, out, _ = cli(capsys, repo, "run", "scale", "--args", '{"x": 2, "factor": NaN}', "--json")
    assert code == 1 and "'factor' must be a finite number" in json.loads(out)["error"]
    code, _, err = cli(capsys, repo, "run", "scale", "--arg", "x=" + "9" * 5000)
    assert code == 1 and "argument 'x' must be an integer, not the string '999" in err
    code, out, _ = cli(capsys, repo, "run", "scale", "--args", '{"x": ' + "9" * 5000 + "}", "--json")
    assert code == 2 and "not valid JSON: Exceeds the limit" in json.loads(out)["error"]
    code, out, _ = cli(capsys, repo, "list", "--json")
    assert json.loads(out)[0]["calls"] == 0, "nothing ran"
    code, out, _ = cli(capsys, repo, "run", "scale", "--arg", "x=3", "--arg", "factor=1.5")
    assert (code, out.strip()) == (0, "4.5")


def test_a_tool_file_with_a_utf8_bom_is_accepted(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_tool(repo, prefix=b"\xef\xbb\xbf")
    code, out, err = cli(capsys, repo, "run", "scale", "--arg", "x=2")
    assert (code, out.strip()) == (0, "4.0"), err
    code, out, _ = cli(capsys, repo, "show", "scale", "--json")
    assert json.loads(out)["status"] in ("ok", "unused")


async def test_a_model_call_with_bad_arguments_is_an_error_result_and_nothing_runs(repo: Path) -> None:
    write_tool(repo)
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("call_tool", {"name": "scale", "args": {"x": "ten"}})),
                    reply(tool_use("call_tool", {"name": "scale", "args": {"factor": 2}})),
                    reply(tool_use("call_tool", {"name": "scale", "args": {"x": 2, "factr": 2}})),
                    reply(tool_use("call_tool", {"name": "scale", "args": {"x": 2}})),
                    reply(tool_use("scale", {"x": [1]})),  # listed in its tools: called directly
                    reply(text("done")))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "scale ten")
            usage = catalog_of(runtime).state.usage()
    results = [request.tool_results()[0] for request in api.requests[1:]]
    assert results[0]["is_error"] and "scale: argument 'x' must be an integer, not the string 'ten'" in results[0]["content"]
    assert results[1]["is_error"] and "scale is missing required argument(s) x" in results[1]["content"]
    assert results[2]["is_error"] and "scale has no argument(s) factr; it takes: x, factor" in results[2]["content"]
    assert not results[3].get("is_error") and results[3]["content"] == "4.0"
    assert results[4]["is_error"] and "scale: argument 'x' must be an integer, not a list of 1" in results[4]["content"]
    assert [e.is_error for e in of_type(events, ToolCallFinished)] == [True, True, True, False, True]
    assert usage["scale"].calls == 1, "only the valid call ran"


async def test_a_model_call_with_a_number_too_large_for_a_float_is_refused(repo: Path) -> None:
    """The model's raw JSON `1e400` reads as inf: an error result, never a run with inf."""
    write_tool(repo)
    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use_raw("scale", '{"x": 2, "factor": 1e400}')),
                    reply(tool_use_raw("call_tool", '{"name": "scale", "args": {"x": 1e400}}')),
                    reply(text("done")))
        async with agent_runtime(repo, api) as runtime:
            events = await run_turn(runtime, "scale by a lot")
            usage = catalog_of(runtime).state.usage()
    results = [request.tool_results()[0] for request in api.requests[1:]]
    assert results[0]["is_error"] and "argument 'factor' must be a finite number, not inf" in results[0]["content"]
    assert results[1]["is_error"] and "argument 'args'['x'] must be a finite number, not inf" in results[1]["content"]
    assert all(request.messages[1]["content"][0]["input"] == {} for request in api.requests[1:]), "replayed as {}"
    assert [e.is_error for e in of_type(events, ToolCallFinished)] == [True, True]
    assert "scale" not in usage or usage["scale"].calls == 0, "nothing ran"
