"""Loop protection: a recipe whose own action changes files matching its trigger does not loop; runaway recipes are throttled."""

from __future__ import annotations

import asyncio
from pathlib import Path

from tests.recipes_helpers import COUNT_LINES, STAMP_FILE, open_stack, recipe_text, wait_for, watching
from tui_agent.core.recipes import LoopGuard


class ManualClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


async def test_recipe_changing_its_own_trigger_files_runs_once_with_a_notice(repo: Path) -> None:
    stamp = recipe_text('on = "file_changed"\npaths = ["*.py"]\ndebounce_ms = 50', 'tool = "stamp_file"\nargs = { path = "{path}" }')
    async with open_stack(repo, tools={"stamp_file": STAMP_FILE}, recipes={"stamp": stamp}) as stack:
        async with watching(stack):
            (repo / "app.py").write_text("print('edited')\n")
            await wait_for(lambda: stack.notices("loop protection"))
            await asyncio.sleep(1.5)  # time for any echo to come back and (wrongly) re-trigger
            await stack.engine.idle()
            assert len(stack.engine.runlog.entries("stamp")) == 1
            assert (repo / "app.py").read_text() == "print('edited')\n# stamped\n"
            assert stack.notices("recipe stamp changed app.py, which matches its own trigger")
            # an edit by the person right after (still inside the grace window) is not the recipe's echo:
            # its modification time is after the run ended, so the recipe runs again, once
            (repo / "app.py").write_text("print('edited again')\n")
            await wait_for(lambda: len(stack.engine.runlog.entries("stamp")) == 2)
            await asyncio.sleep(1.0)
            await stack.engine.idle()
        assert len(stack.engine.runlog.entries("stamp")) == 2
        assert (repo / "app.py").read_text() == "print('edited again')\n# stamped\n"


async def test_ping_pong_between_recipes_is_throttled_with_a_warning(repo: Path) -> None:
    # a.py changes → ping stamps b.py; b.py changes → pong stamps a.py: each recipe's writes match the other's trigger
    ping = recipe_text('on = "file_changed"\npaths = ["a.py"]\ndebounce_ms = 0', 'tool = "stamp_file"\nargs = { path = "b.py" }')
    pong = recipe_text('on = "file_changed"\npaths = ["b.py"]\ndebounce_ms = 0', 'tool = "stamp_file"\nargs = { path = "a.py" }')
    guard = LoopGuard(max_runs=3, window_s=30.0, cooldown_s=60.0)
    async with open_stack(repo, tools={"stamp_file": STAMP_FILE}, recipes={"ping": ping, "pong": pong}, guard=guard) as stack:
        async with watching(stack):
            (repo / "a.py").write_text("start\n")
            await wait_for(lambda: stack.notices("looks like a loop"), timeout=20)
            await asyncio.sleep(1.0)
            await stack.engine.idle()
            runs = len(stack.engine.runlog.entries())
            await asyncio.sleep(1.0)
            assert len(stack.engine.runlog.entries()) == runs  # stopped for good
        assert runs <= 2 * guard.max_runs
        assert any("paused for 60 s" in text for text in stack.notices())


async def test_throttle_pauses_then_resumes_after_cooldown(repo: Path) -> None:
    clock = ManualClock()
    guard = LoopGuard(grace_s=0.0, max_runs=2, window_s=10.0, cooldown_s=5.0, clock=clock)
    lines = recipe_text('on = "file_changed"\npaths = ["*.py"]\ndebounce_ms = 0', 'tool = "count_lines"\nargs = { path = "{path}" }')
    async with open_stack(repo, tools={"count_lines": COUNT_LINES}, recipes={"lines": lines}, guard=guard) as stack:
        for _ in range(4):
            clock.now += 0.1
            stack.engine.files_changed(["app.py"])
            await stack.engine.idle()
        assert len(stack.engine.runlog.entries("lines")) == 2
        assert len(stack.notices("looks like a loop")) == 1
        clock.now += 6.0
        stack.engine.files_changed(["app.py"])
        await stack.engine.idle()
        assert len(stack.engine.runlog.entries("lines")) == 3


def test_loop_guard_uses_modification_times_inside_the_window() -> None:
    clock, wall = ManualClock(), ManualClock()
    wall.now = 1_000.0
    guard = LoopGuard(grace_s=1.0, clock=clock, wall_clock=wall)
    guard.run_started("fmt")
    wall.now += 0.3
    guard.run_finished("fmt")
    clock.now += 0.2
    assert guard.is_own_change("fmt", "written_during_run.py", mtime=1_000.1)
    assert not guard.is_own_change("fmt", "edited_after_run.py", mtime=1_000.5)
    assert not guard.is_own_change("fmt", "edited_before_run.py", mtime=999.0)
    assert guard.is_own_change("fmt", "deleted_by_run.py", mtime=None)


def test_loop_guard_attribution_window() -> None:
    clock = ManualClock()
    guard = LoopGuard(grace_s=1.0, clock=clock)
    assert not guard.is_own_change("fmt", "a.py")
    guard.run_started("fmt")
    assert guard.is_own_change("fmt", "a.py")
    guard.run_finished("fmt")
    clock.now += 0.5
    assert guard.is_own_change("fmt", "b.py")
    assert guard.take_own_changes("fmt") == ["a.py", "b.py"]
    clock.now += 0.6
    assert not guard.is_own_change("fmt", "a.py")
    assert not guard.is_own_change("other", "a.py")


def test_changes_after_another_recipe_started_are_not_attributed_to_the_previous_one() -> None:
    clock = ManualClock()
    guard = LoopGuard(grace_s=1.0, clock=clock)
    guard.run_started("ping")
    guard.run_finished("ping")
    guard.run_started("pong")
    guard.run_finished("pong")
    clock.now += 0.2
    assert not guard.is_own_change("ping", "a.py")
    assert guard.is_own_change("pong", "b.py")
