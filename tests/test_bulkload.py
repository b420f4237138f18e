"""Bulk loads pause automatic collection and freeze what they built, also when nested or run on several threads."""

from __future__ import annotations

import gc
import sys
import threading
from pathlib import Path

import pytest

from tui_agent.core.bulkload import collect_again, import_in_bulk, long_lived_objects


def test_collection_is_paused_inside_and_what_was_built_is_frozen_after() -> None:
    gc.collect()
    frozen_before = gc.get_freeze_count()
    try:
        with long_lived_objects():
            assert not gc.isenabled()
            built = [{"n": n} for n in range(1000)]
            with long_lived_objects():  # nested: the outer one still holds the pause
                pass
            assert not gc.isenabled()
        assert gc.isenabled()
        assert gc.get_freeze_count() >= frozen_before + len(built)
    finally:
        gc.unfreeze()


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    try:
        with long_lived_objects():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()


def test_collection_resumes_only_when_the_last_of_several_threads_is_done() -> None:
    first_inside, second_done, release_first = threading.Event(), threading.Event(), threading.Event()
    seen_after_second: list[bool] = []

    def first() -> None:
        with long_lived_objects():
            first_inside.set()
            release_first.wait(10)

    def second() -> None:
        first_inside.wait(10)
        with long_lived_objects():
            pass
        seen_after_second.append(gc.isenabled())
        second_done.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    try:
        for thread in threads:
            thread.start()
        assert second_done.wait(10)
        assert seen_after_second == [False]  # the first load is still running
        release_first.set()
        for thread in threads:
            thread.join(10)
        assert gc.isenabled()
    finally:
        release_first.set()
        gc.unfreeze()


def test_a_bulk_import_runs_with_collection_paused_and_its_module_is_frozen(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The TUI imports the core (and the trust package) this way while the project opens, as the SDK's import."""
    (tmp_path / "bulk_probe_module.py").write_text(
        "import gc\nCOLLECTOR_ON = gc.isenabled()\nTABLE = [{'n': n} for n in range(1000)]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    gc.collect()
    frozen_before = gc.get_freeze_count()
    try:
        module = import_in_bulk("bulk_probe_module")
        assert module.COLLECTOR_ON is False
        assert gc.isenabled()
        assert gc.get_freeze_count() >= frozen_before + len(module.TABLE)
        assert import_in_bulk("bulk_probe_module") is module  # imported once
    finally:
        sys.modules.pop("bulk_probe_module", None)
        gc.unfreeze()


def test_turning_collection_on_during_a_bulk_load_waits_for_its_end() -> None:
    gc.disable()
    try:
        with long_lived_objects():
            collect_again()  # the app's opening ends while the SDK still imports on another thread
            assert not gc.isenabled()
        assert gc.isenabled()
        gc.disable()
        collect_again()  # no bulk load running: at once
        assert gc.isenabled()
    finally:
        gc.enable()
        gc.unfreeze()
