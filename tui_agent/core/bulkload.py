"""Bulk imports without the garbage collector's full passes: what they build lives as long as the process."""

from __future__ import annotations

import gc
import importlib
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import ModuleType


class _Pauses:
    """How many bulk loads are running, and whether automatic collection was on before the first began."""

    lock = threading.Lock()
    running = 0
    collector_was_enabled = True


@contextmanager
def long_lived_objects() -> Iterator[None]:
    """Build long-lived objects in bulk (a big import) with automatic collection paused, then freeze them.

    Importing the model SDK creates about 200,000 objects and almost no garbage, yet each automatic full collection
    meanwhile walked all of them: about 0.2 s more import time, and a pause of 100 ms and more for every other thread
    (the TUI's event loop among them). Frozen, they are skipped by every later collection too; reference counting
    still frees them. Nested and concurrent uses are counted: collection resumes when the last one ends."""
    with _Pauses.lock:
        if _Pauses.running == 0:
            _Pauses.collector_was_enabled = gc.isenabled()
            gc.disable()
        _Pauses.running += 1
    try:
        yield
    finally:
        with _Pauses.lock:
            _Pauses.running -= 1
            if _Pauses.running == 0:
                gc.freeze()
                if _Pauses.collector_was_enabled:
                    gc.enable()


def collect_again() -> None:
    """Turn automatic collection on: now, or once the bulk loads running end (their pause is kept)."""
    with _Pauses.lock:
        if _Pauses.running:
            _Pauses.collector_was_enabled = True
        else:
            gc.enable()


def import_in_bulk(name: str) -> ModuleType:
    """Import module `name` (and what it imports) with automatic collection paused, then frozen: the TUI's imports
    of the core while the project opens (thousands of classes, pydantic's settings among them), as the SDK's."""
    with long_lived_objects():
        return importlib.import_module(name)
