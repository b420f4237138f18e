"""The UI's plain-data helpers: catalog rows, slash parsing, schema forms, diff parsing, prompt history, transcripts."""

from __future__ import annotations

import pytest
from rich.console import Console

from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.catalog.models import ToolRecord, ToolSpec
from tui_agent.core.catalog.items import tool_item as row_from_tool  # the store builds the rows since issue 9
from tui_agent.ui.catalog_rows import CatalogRow, filter_rows, format_last_used, sort_rows
from tui_agent.ui.diffs import diff_stats, parse_unified, render_side_by_side, render_unified, side_by_side
from tui_agent.ui.schema_form import ArgumentError, collect_arguments, fields_from_schema
from tui_agent.ui.slash import parse_slash, unescape_prompt
from tui_agent.core.agent.session_events import decode_events
from tui_agent.ui.transcript import transcript_of
from tui_agent.ui.widgets.prompt import PromptHistory

DIFF = """\
diff --git a/.agent/tools/double.py b/.agent/tools/double.py
--- a/.agent/tools/double.py
+++ b/.agent/tools/double.py
@@ -1,4 +1,5 @@
 def double(x: int) -> int:
-    return x + x
+    # clearer
+    return 2 * x
 
 VALUE = 1
"""


def rows() -> list[CatalogRow]:
    return [
        CatalogRow("grep_name", "tool", "ok", 12, 1000.0, "grep a name"),
        CatalogRow("sort_by_time", "tool", "unused", 0, None, "sort things by time"),
        CatalogRow("broken_one", "tool", "broken", 3, 500.0, "parse: bad"),
        CatalogRow("on_save", "recipe", "ok", 4, 2000.0, "on file change"),
    ]


def test_row_from_tool_record_takes_summary_status_and_usage() -> None:
    spec = ToolSpec("double", "Double a number.\n\nArgs:\n  x: n", {"type": "object"}, "sha")
    record = ToolRecord("double", "ok", spec, calls=3, failures=1, last_used=123.0, mean_ms=4.5)
    row = row_from_tool(record)
    assert (row.name, row.status, row.calls, row.last_used, row.summary, row.failures) == ("double", "ok", 3, 123.0, "Double a number.", 1)
    broken = row_from_tool(ToolRecord("bad", "broken", None, error=PipelineError("parse", "invalid syntax", 3)))
    assert broken.status == "broken" and "invalid syntax" in broken.summary and broken.error.startswith("parse")


def test_sort_and_filter() -> None:
    assert [r.name for r in sort_rows(rows(), "calls")] == ["grep_name", "on_save", "broken_one", "sort_by_time"]
    assert [r.name for r in sort_rows(rows(), "status")][0] == "broken_one"
    assert [r.name for r in sort_rows(rows(), "last_used")][0] == "on_save"
    assert [r.name for r in sort_rows(rows(), "name", reverse=True)][0] == "sort_by_time"
    assert [r.name for r in filter_rows(rows(), "sort time")] == ["sort_by_time"]
    assert [r.name for r in filter_rows(rows(), "status:broken")] == ["broken_one"]
    assert [r.name for r in filter_rows(rows(), "is:recipe")] == ["on_save"]
    assert len(filter_rows(rows(), "")) == 4


def test_last_used_format() -> None:
    assert format_last_used(None, 100) == "never"
    assert format_last_used(100, 130) == "just now"
    assert format_last_used(0, 300) == "5m ago"
    assert format_last_used(0, 7200) == "2h ago"
    assert format_last_used(0, 3 * 86400) == "3d ago"


def test_slash_parsing() -> None:
    assert parse_slash("/tools grep") is not None and parse_slash("/tools grep").args == "grep"  # type: ignore[union-attr]
    assert parse_slash("  /HELP ").name == "help"  # type: ignore[union-attr]
    assert parse_slash("hello /tools") is None
    assert parse_slash("//tools") is None and unescape_prompt("//tools x") == "/tools x"
    assert parse_slash("/usr/bin/env is odd") is None


def test_schema_form_types_and_errors() -> None:
    schema = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "who"},
            "count": {"type": "integer", "default": 3},
            "ratio": {"type": ["number", "null"]},
            "flag": {"type": "boolean"},
            "tags": {"type": "array", "items": {"type": "string"}},
            "mode": {"type": "string", "enum": ["fast", "slow"]},
        },
        "required": ["name", "count"],
    }
    fields = fields_from_schema(schema)
    assert [f.name for f in fields] == ["name", "count", "ratio", "flag", "tags", "mode"]
    assert fields[2].type == "number" and fields[1].required and fields[5].choices == ("fast", "slow")
    args = collect_arguments(fields, {"name": "x", "count": "4", "ratio": "", "flag": True, "tags": '["a"]', "mode": "fast"})
    assert args == {"name": "x", "count": 4, "flag": True, "tags": ["a"], "mode": "fast"}
    with pytest.raises(ArgumentError, match="count"):
        collect_arguments(fields, {"name": "x", "count": "four"})
    with pytest.raises(ArgumentError, match="name: required"):
        collect_arguments(fields, {"count": "1"})
    with pytest.raises(ArgumentError, match="tags"):
        collect_arguments(fields, {"name": "x", "count": "1", "tags": '{"a": 1}'})
    with pytest.raises(ArgumentError, match="mode"):
        collect_arguments(fields, {"name": "x", "count": "1", "mode": "medium"})


def test_diff_parsing_tracks_line_numbers_and_pairs_sides() -> None:
    lines = parse_unified(DIFF)
    added = [line for line in lines if line.kind == "add"]
    assert [line.new_no for line in added] == [2, 3] and added[0].path == ".agent/tools/double.py"
    assert [line.old_no for line in lines if line.kind == "del"] == [2]
    pairs = [row for row in side_by_side(lines) if row.kind in ("add", "del")]
    assert pairs[0].left is not None and pairs[0].left.text == "    return x + x" and pairs[0].right is not None and pairs[0].right.text == "    # clearer"
    assert pairs[1].left is None and pairs[1].right is not None
    assert diff_stats(DIFF) == (2, 1)
    labelled = parse_unified(DIFF.replace("+++ b/.agent/tools/double.py", "+++ b/.agent/tools/double.py\twork tree"))
    assert {line.path for line in labelled if line.kind == "add"} == {".agent/tools/double.py"}


def test_diff_renders_both_views_with_code_colours() -> None:
    console = Console(width=100, record=True, force_terminal=True, color_system="truecolor")
    console.print(render_unified(DIFF))
    unified = console.export_text()
    assert "return 2 * x" in unified and "+" in unified
    console.print(render_side_by_side(DIFF))
    side = console.export_text()
    line = next(text for text in side.splitlines() if "return x + x" in text)
    assert "# clearer" in line  # old and new on the same row
    headers = [text.strip() for text in side.splitlines() if text.startswith(("diff --git", "---", "+++"))]
    assert [header.split(" ")[0] for header in headers] == ["diff", "---", "+++"]  # file headers kept, across both columns
    console.print(render_unified(DIFF))
    styled = console.export_text(styles=True)
    assert "\x1b[" in styled  # syntax colours and +/- backgrounds are there


def test_prompt_history_walks_back_and_restores_draft() -> None:
    history = PromptHistory(["one", "two"])
    assert history.previous("draft") == "two"
    assert history.previous("two") == "one"
    assert history.previous("one") is None
    assert history.next() == "two"
    assert history.next() == "draft"
    history.add("three")
    assert history.entries[-1] == "three" and history.position is None


def test_entries_from_session_records() -> None:
    records = [
        {"type": "session", "id": "s"},
        {"type": "event", "event": "TurnStarted", "data": {"prompt": "hi", "session_id": "s"}},
        {"type": "event", "event": "TextDelta", "data": {"text": "Hel"}},
        {"type": "event", "event": "TextDelta", "data": {"text": "lo"}},
        {"type": "event", "event": "ToolCallStarted", "data": {"call_id": "c1", "name": "grep", "arguments": {"q": "x"}}},
        {"type": "event", "event": "ToolCallFinished", "data": {"call_id": "c1", "name": "grep", "result": "3 hits", "is_error": False, "duration_ms": 12.0}},
        {"type": "event", "event": "TurnFailed", "data": {"message": "boom"}},
    ]
    entries = transcript_of(decode_events(records).events).entries
    assert [e.kind for e in entries] == ["user", "assistant", "tool", "notice"]
    assert entries[1].text == "Hello" and entries[2].result == "3 hits" and entries[2].duration_ms == 12.0


def test_every_builtin_command_and_catalog_key_has_a_handler(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import re

    from tui_agent.ui.app import TuiAgentApp
    from tui_agent.ui.slash import BUILTIN_COMMANDS
    from tui_agent.ui.widgets.catalog_pane import CatalogPane

    app = TuiAgentApp(tmp_path)
    assert app.commands.missing() == [] and app.commands.builtin_names() == list(BUILTIN_COMMANDS)
    requested = {match.group(1) for binding in CatalogPane.BINDINGS if (match := re.fullmatch(r"request\('(\w+)'\)", binding.action))}
    suggestion_only = {"author", "dismiss"}  # keys of `suggested` rows, answered by catalog_care.suggestion_action
    assert requested - suggestion_only <= set(app.catalog_actions.actions()) and "restore" in app.catalog_actions.actions()


def test_the_desktop_notification_is_sent_only_to_terminals_known_to_show_it() -> None:
    from tui_agent.ui.turn_alert import notification_sequence

    assert notification_sequence("tuiagent", "done\x07 after 40 s", {"TERM_PROGRAM": "iTerm.app"}) == "\x1b]9;tuiagent: done after 40 s\x07"
    assert notification_sequence("tuiagent", "a;b", {"TERM": "foot"}) == "\x1b]777;notify;tuiagent;a,b\x07"
    assert notification_sequence("tuiagent", "x", {"TERM": "xterm-256color", "VTE_VERSION": "7600"}).startswith("\x1b]777;")
    assert notification_sequence("tuiagent", "x", {"TERM": "screen-256color"}) == ""  # tmux: the bell alone
