"""Keeps the garbage collector's full passes short: objects alive once the project or a session is loaded are frozen."""

from __future__ import annotations

import contextlib
import gc

FULL_PASS_EVERY = 4
"""Middle-generation passes between two full ones while the app runs (the collector's own default is 10)."""


def freeze_long_lived() -> None:
    """Move every object alive now (modules, the runtime, the catalog, a loaded session's entries) out of the collector's scans.

    A full collection scans every tracked object: with the few hundred thousand alive once the project and a
    2,000-message session are open, each one blocked the event loop for 120-190 ms, and scrolling triggers one every
    few page-ups. Frozen objects are still freed by reference counting; `thaw` hands them back to the collector.
    """
    gc.freeze()


def release_dropped_widgets() -> None:
    """Let the rendered lines of widgets that are gone be freed (call after removing or recycling many widgets).

    Textual memoizes `StylesCache.get_inner_outer` with an `lru_cache` of 1,024 entries keyed by the cache object
    itself: each removed widget's styles cache, with every line it rendered, stayed alive until pushed out. Paging
    a long session piled up thousands of such lines, and each full garbage collection walked them all."""
    with contextlib.suppress(ImportError, AttributeError):  # a private part of Textual: another version may not have it
        from textual._styles_cache import StylesCache

        StylesCache.get_inner_outer.cache_clear()


def collect_between_frames() -> None:
    """Run a full collection when one is due (call it from a timer: between frames), not inside the next frame.

    The automatic one starts when an allocation crosses a threshold, so nearly always in the middle of a render,
    and adds its pause to that frame's; run from a timer it is a pause of its own. It runs after FULL_PASS_EVERY
    middle-generation passes rather than the collector's ten: a pass costs the live objects (about 8 ms once the
    long-lived ones are frozen) plus the garbage since the last one, so shorter and more frequent passes keep the
    longest pause down. Start the timer only once the long-lived objects are frozen: before, each pass walks all of
    them (the collector's own rules space those out)."""
    if gc.get_count()[2] >= FULL_PASS_EVERY:
        gc.collect()


def thaw() -> None:
    """Give frozen objects back to the collector (when the app closes, so a process that opens apps again can free them)."""
    gc.unfreeze()
