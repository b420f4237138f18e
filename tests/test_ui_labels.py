"""What tool-call blocks say: durations, cancelled and unknown tools, fold hints, folded create_tool summaries."""

from __future__ import annotations

from tui_agent.ui.widgets.messages import Entry, format_duration, tool_title


def test_durations_read_naturally() -> None:
    assert [format_duration(ms) for ms in (None, 0, 12.4, 999, 2_400, 59_949, 185_000)] == ["0 ms", "0 ms", "12 ms", "999 ms", "2.4 s", "59.9 s", "3m 05s"]


def test_cancelled_and_unknown_calls_have_their_own_outcome() -> None:
    cancelled = Entry("tool", tool="run_python", arguments={"code": "x"}, result="cancelled (esc): the call was stopped", is_error=True, duration_ms=2400, cancelled=True)
    assert tool_title(cancelled) == "run_python(code=<1 lines>)  cancelled · 2.4 s"
    unknown = Entry("tool", tool="nosuch", arguments={"a": 1}, result="there is no tool named 'nosuch'; use search_tools", is_error=True, duration_ms=0, authored=True)
    assert tool_title(unknown) == "nosuch(a=1)  unknown tool"
    via_catalog = Entry("tool", tool="call_tool", arguments={"name": "nosuch"}, result="no callable catalog tool named 'nosuch'", is_error=True)
    assert tool_title(via_catalog).endswith("  unknown tool")
    failed = Entry("tool", tool="double", arguments={"x": 1}, result="ValueError: bad", is_error=True, duration_ms=31)
    assert tool_title(failed) == "double(x=1)  error · 31 ms"


def rendered(renderable) -> str:  # type: ignore[no-untyped-def]
    from rich.console import Console

    console = Console(width=100, record=True)
    console.print(renderable)
    return console.export_text()


def test_a_writes_approval_shows_labelled_arguments_and_a_file_edit_shows_its_diff() -> None:
    from tui_agent.ui.approval_detail import approval_detail

    arguments = rendered(approval_detail("write", "rename_files", '{\n "pattern": "*.txt",\n "suffix": ".bak"\n}'))
    assert arguments.splitlines()[0] == "arguments" and '"pattern": "*.txt"' in arguments and "WRITES = True" in arguments
    assert not any(line.strip().startswith(("1 ", "+", "-")) for line in arguments.splitlines())  # no diff gutter
    diff = rendered(approval_detail("write", "edit_file", "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"))
    assert "+++ b/x.py" in diff and any(line.strip().startswith("1") and "a = 2" in line for line in diff.splitlines())
    command = rendered(approval_detail("shell", "run_shell", "pytest -q"))
    assert command.strip().splitlines() == ["command: 1 line, 9 characters", "pytest -q"]


async def test_a_title_wider_than_its_pane_is_shown_cut_without_a_hint() -> None:
    from textual.app import App, ComposeResult

    from tui_agent.ui.widgets.messages import ToolCallBlock

    source = "def count_words(path: str) -> int:\n    return 1\n"
    entry = Entry("tool", tool="create_tool", arguments={"name": "count_words", "source": source}, authored=True)

    class Narrow(App[None]):
        def compose(self) -> ComposeResult:
            yield ToolCallBlock(entry)

    app = Narrow()
    async with app.run_test(size=(40, 10)) as pilot:  # the running create_tool title cannot shorten below the pane
        await pilot.pause()
        block = app.query_one(ToolCallBlock)
        width = block.label_width()
        assert width is not None and len(block.title) > width
        assert str(block._title.label) == block.title  # the title alone: no hint, and no error for want of one
        entry.result, entry.duration_ms = "tests: none", 12.0
        block.refresh_entry()
        await pilot.pause()
        assert block.title.startswith("create_tool count_words · 2 lines") and str(block._title.label).startswith(block.title)
