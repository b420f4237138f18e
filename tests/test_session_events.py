"""A session's event records read back as the typed events written (generated events, generated hostile records)."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui_agent.core.agent.session_events import EVENT_TYPES, BadEventRecord, decode_event, decode_events
from tui_agent.core.agent.sessions import SessionLog, list_sessions, load_messages, load_usage, read_events
from tui_agent.core.events import (
    ApprovalDenied,
    BranchChanged,
    CatalogChanged,
    Event,
    FilesChanged,
    Notice,
    TextDelta,
    ToolAuthored,
    ToolCallFinished,
    ToolCallStarted,
    TurnFailed,
    TurnFinished,
    TurnStarted,
    Usage,
    UsageChanged,
)
from tui_agent.core.project import Project

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**12, 10**12) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
json_objects = st.dictionaries(st.text(max_size=8), json_values, max_size=4)
texts = st.text(max_size=40)
counts = st.integers(0, 10**9)
money = st.floats(0, 1e6, allow_nan=False)
levels = st.sampled_from(["info", "warning", "error"])
kinds = st.sampled_from(["tool", "recipe"])

events = st.one_of(
    st.builds(TurnStarted, texts, texts),
    st.builds(TextDelta, texts),
    st.builds(ToolCallStarted, texts, texts, json_objects, st.booleans()),
    st.builds(ToolCallFinished, texts, texts, texts, st.booleans(), money, st.booleans(), st.booleans()),
    st.builds(ApprovalDenied, texts, texts, texts),
    st.builds(ToolAuthored, texts, kinds, texts, st.none() | texts, st.booleans()),
    st.builds(CatalogChanged, st.lists(texts, max_size=3).map(tuple), texts, kinds),
    st.builds(FilesChanged, st.lists(texts, max_size=3).map(tuple)),
    st.builds(BranchChanged, texts),
    st.builds(UsageChanged),
    st.builds(Notice, texts, levels),
    st.builds(Usage, counts, counts, counts, counts, money, money, counts, counts, counts, counts),
    st.builds(TurnFinished, texts, texts),
    st.builds(TurnFailed, texts, texts, json_objects, texts),
)

# What hostile agent code could write instead: any name, any data, wrong types for real fields.
event_names = st.sampled_from(sorted(EVENT_TYPES)) | st.text(max_size=12) | json_values
hostile_records = st.one_of(
    st.fixed_dictionaries({"type": st.just("event"), "event": event_names, "data": json_values | json_objects}),
    st.fixed_dictionaries({"type": st.just("event"), "event": event_names}),
    json_objects,
)


def session_log(tmp_path: Path) -> SessionLog:
    project = Project.at(tmp_path)
    return SessionLog.create(project, model="m")


@SETTINGS
@given(written=st.lists(events, max_size=12))
def test_events_written_to_a_session_read_back_equal(tmp_path: Path, written: list[Event]) -> None:
    log = session_log(tmp_path)
    log.append_message({"role": "user", "content": "hi"})  # other records are passed over
    for event in written:
        log.append_event(event)
    log.close()
    decoded = read_events(log.path)
    assert decoded.problems == []
    assert decoded.events == written
    assert [type(event) for event in decoded.events] == [type(event) for event in written]


@SETTINGS
@given(records=st.lists(hostile_records, max_size=12))
def test_hostile_records_decode_or_are_named_never_a_traceback(records: list[dict[str, Any]]) -> None:
    decoded = decode_events(records)
    event_records = [record for record in records if record.get("type") == "event"]
    assert len(decoded.events) + len(decoded.problems) == len(event_records)
    for event in decoded.events:
        assert type(event) in EVENT_TYPES.values()
        for field in dataclasses.fields(event):  # what decoded has the declared types (spot-checked by kind)
            value = getattr(event, field.name)
            if isinstance(value, float):
                assert math.isfinite(value)
    for problem in decoded.problems:
        assert problem.startswith("record ") and len(problem) < 400


WRONG_VALUES: dict[str, list[Any]] = {
    "str": [None, 1, 1.5, True, [], {}],
    "str | None": [1, 1.5, True, ["x"], {}],
    "bool": [None, 1, 0, "true", 1.5],
    "int": [None, "1", 1.5, True, []],
    "float": [None, "1.5", True, [], {}],
    "dict[str, Any]": [None, [], "x", 1],
    "JsonObject": [None, [], "x", 1],
    "tuple[str, ...]": [None, "x", [1], 1, {}],
    "Literal['tool', 'recipe']": ["neither", None, 1],
    "Literal['info', 'warning', 'error']": ["loud", None, 1],
}


@SETTINGS
@given(event=events, data=st.data())
def test_a_record_with_a_field_missing_or_of_the_wrong_type_is_rejected(event: Event, data: st.DataObject) -> None:
    name = type(event).__name__
    record = {"type": "event", "event": name, "data": json.loads(json.dumps(dataclasses.asdict(event)))}
    fields = dataclasses.fields(event)
    if not fields:
        return
    field = data.draw(st.sampled_from(fields))
    wrong = data.draw(st.sampled_from(WRONG_VALUES[str(field.type)]))
    try:
        decode_event({**record, "data": {**record["data"], field.name: wrong}})
    except BadEventRecord as error:
        assert name in str(error) and field.name in str(error)
    else:
        raise AssertionError(f"{name}.{field.name} = {wrong!r} decoded")
    if field.default is dataclasses.MISSING and field.default_factory is dataclasses.MISSING:
        missing = {key: value for key, value in record["data"].items() if key != field.name}
        try:
            decode_event({**record, "data": missing})
        except BadEventRecord as error:
            assert field.name in str(error)
        else:
            raise AssertionError(f"{name} decoded without {field.name}")


def test_strictness_and_unknown_events() -> None:
    good = {"call_id": "c", "name": "grep", "result": "ok", "is_error": False, "duration_ms": 12}
    assert decode_event({"type": "event", "event": "ToolCallFinished", "data": good}) == ToolCallFinished("c", "grep", "ok", False, 12.0)
    for wrong in ({"is_error": 1}, {"duration_ms": "12"}, {"duration_ms": math.nan}, {"duration_ms": math.inf}, {"result": None}):
        try:
            decode_event({"type": "event", "event": "ToolCallFinished", "data": {**good, **wrong}})
        except BadEventRecord:
            continue
        raise AssertionError(f"{wrong} decoded")
    decoded = decode_events([{"type": "event", "event": "Explode", "data": {}}, {"type": "event", "event": "TextDelta", "data": {"text": "hi", "extra": 1}}])
    assert decoded.events == [TextDelta("hi")] and decoded.problems == ["record 1: unknown event 'Explode'"]


def test_a_hostile_session_file_is_read_without_a_traceback(tmp_path: Path) -> None:
    project = Project.at(tmp_path)
    project.sessions_dir.mkdir(parents=True)
    path = project.sessions_dir / "hostile.jsonl"
    lines = [
        '{"type": "session", "id": "hostile", "model": 7}',
        '{"type": "event", "event": "TurnStarted", "data": {"prompt": ["not", "text"], "session_id": "hostile"}}',
        '{"type": "event", "event": "Usage", "data": {"input_tokens": "many", "cost_usd": NaN}}',
        '{"type": "event", "event": "Usage", "data": []}',
        '{"type": "event", "event": "ToolCallFinished", "data": {"call_id": "c", "result": 5}}',
        "[" * 100_000 + "]" * 100_000,
        '{"type": "event", "event": "TextDelta", "data": {"text": "still shown"}}',
        "\x00\xff not json",
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogateescape")
    decoded = read_events(path)
    assert decoded.events == [TextDelta("still shown")] and len(decoded.problems) == 4
    assert load_usage(path)["cost_usd"] == 0.0
    assert load_messages(path) == []
    assert [info.first_prompt for info in list_sessions(project)] == [""]
