"""The prompt plan: a frozen prefix, tools appended not reshuffled, change notes, breakpoints, no unsendable tool."""

from __future__ import annotations

from tests.fake_api import validator
from tui_agent.core.agent.builtins import builtin_tools
from tui_agent.core.agent.history import request_messages
from tui_agent.core.agent.system_prompt import CatalogEntry
from tui_agent.core.agent.frozen_prefix import PromptPlan, with_breakpoints

BUILTINS = builtin_tools(has_sandbox=True, has_catalog=True, has_recipes=False)


def entry(name: str, summary: str = "Does a thing.", status: str = "ok", calls: int = 0) -> CatalogEntry:
    api = {"name": name, "description": summary, "input_schema": {"type": "object", "properties": {}}}
    return CatalogEntry(name, summary, status, calls, 0.0, api)


def frozen(entries: list[CatalogEntry], top_k: int = 2) -> PromptPlan:
    plan = PromptPlan()
    plan.freeze(root="/p", mode="ask", ranked=entries, budget=2000, top_k=top_k, builtins=BUILTINS)
    return plan


def test_using_tools_reshuffles_nothing_and_new_tools_are_appended() -> None:
    entries = [entry("b_tool"), entry("a_tool"), entry("c_tool")]
    plan = frozen(entries)
    first = plan.tools(BUILTINS, entries, [])
    assert [t["name"] for t in first][-2:] == ["a_tool", "b_tool"] and "cache_control" in first[-1]
    reranked = [entry("c_tool", calls=9), *entries[:2]]  # c_tool used a lot since: still not in the top K of this conversation
    assert plan.tools(BUILTINS, reranked, []) == first
    grown = plan.tools(BUILTINS, [*entries, entry("z_new")], [])
    assert [t["name"] for t in grown][:-1] == [t["name"] for t in first] and grown[-1]["name"] == "z_new"


def test_a_tool_the_api_would_refuse_is_never_sent() -> None:
    bad_name = CatalogEntry("bad.name", "x", "ok", 0, 0.0, {"name": "bad.name", "description": "x", "input_schema": {"type": "object"}})
    long_name = entry("t" * 65)
    not_object = CatalogEntry("scalar", "x", "ok", 0, 0.0, {"name": "scalar", "description": "x", "input_schema": {"type": "string"}})
    entries = [bad_name, long_name, not_object, entry("fine")]
    plan = frozen(entries, top_k=10)
    tools = plan.tools(BUILTINS, [*entries, entry("ok_later"), CatalogEntry("é", "x", "ok", 0, 0.0, {"name": "é", "input_schema": {"type": "object"}})], [])
    names = [t["name"] for t in tools]
    assert "fine" in names and "ok_later" in names and not {"bad.name", "t" * 65, "scalar", "é"} & set(names)
    body = {"model": "m", "max_tokens": 1, "tools": tools, "system": plan.system, "messages": [{"role": "user", "content": "hi"}]}
    assert validator.problems(body) == []


def test_changes_become_one_note_and_are_told_once() -> None:
    entries = [entry("a_tool"), entry("b_tool")]
    plan = frozen(entries)
    assert plan.changes(entries, "ask") == ""
    note = plan.changes([entry("a_tool", status="broken"), entry("c_tool", "Counts.")], "auto")
    assert "- new tool c_tool: Counts." in note and "- b_tool was removed" in note and "- a_tool changed: Does a thing. [broken]" in note
    assert "permission mode is now `auto`" in note
    assert plan.changes([entry("a_tool", status="broken"), entry("c_tool", "Counts.")], "auto") == ""


def test_breakpoints_mark_the_end_and_the_previous_end_without_touching_the_history() -> None:
    history = [{"role": "user", "content": [{"type": "text", "text": "hi"}]},
               {"role": "assistant", "content": [{"type": "text", "text": "\n\n"}, {"type": "tool_use", "id": "t1", "name": "x", "input": {}}]},
               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}]
    marked, end = with_breakpoints(request_messages(history), (0, 0))
    assert end == (2, 0) and marked[0]["content"][0]["cache_control"] and marked[2]["content"][0]["cache_control"]
    assert marked[1]["content"] == [{"type": "tool_use", "id": "t1", "name": "x", "input": {}}]  # the blank text dropped
    assert "cache_control" not in history[0]["content"][0] and len(history[1]["content"]) == 2  # the history itself is unchanged


def test_a_wholesale_change_is_summed_up() -> None:
    plan = frozen([])
    note = plan.changes([entry(f"tool_{i:03d}") for i in range(300)], "ask")
    assert note.count("\n- new tool") == 20 and "and 280 more changes" in note and len(note) < 2500
