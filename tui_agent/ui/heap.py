"""Keeps the garbage collector's full passes short: objects alive once the project or a session is loaded are frozen."""

from __future__ import annotations

import gc


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
    from textual._styles_cache import StylesCache

    StylesCache.get_inner_outer.cache_clear()


def thaw() -> None:
    """Give frozen objects back to the collector (when the app closes, so a process that opens apps again can free them)."""
    gc.unfreeze()
