"""Keeps the garbage collector's full passes short: objects alive once the project or a session is loaded are frozen."""

from __future__ import annotations

import gc
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.style import Style


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
    try:
        from textual._styles_cache import StylesCache

        StylesCache.get_inner_outer.cache_clear()
    except (ImportError, AttributeError):  # a private part of Textual: another version may not have it
        pass


def collect_between_frames() -> None:
    """Run the full collection that is about due now (call it from a timer: between frames), not inside the next frame.

    The automatic one starts when an allocation crosses a threshold, so nearly always in the middle of a render,
    and adds its 20-40 ms to that frame's; run a little early from a timer it is a pause of its own. Start the timer
    only once the long-lived objects are frozen: before, each pass walks all of them (the collector's own rules
    space those out)."""
    if gc.get_count()[2] >= gc.get_threshold()[2] - 1:
        gc.collect()


def thaw() -> None:
    """Give frozen objects back to the collector (when the app closes, so a process that opens apps again can free them)."""
    gc.unfreeze()


def break_strip_cycles() -> None:
    """Stop Textual's `Strip` from caching itself in its own caches (call once, before the first frame).

    `Strip.divide` with one cut at the strip's end returns `[self]` and stores that list in the strip's
    `_divide_cache`; `crop_extend` can store the strip itself in `_crop_extend_cache`. Each such strip, with its seven
    caches and segments, became cyclic garbage that only a full collection frees: paging a long session left about
    10,000 such objects every half second, and each full pass that freed them blocked the loop for 30-60 ms.
    Here the cache is emptied whenever the answer is the strip itself (computing it again costs nothing)."""
    from textual.strip import Strip

    if "_cycles_broken" in vars(Strip) or not {"_divide_cache", "_crop_extend_cache"} <= set(Strip.__slots__):
        return  # patched already, or another Textual version
    divide = Strip.divide
    crop_extend = Strip.crop_extend

    def divide_without_self(strip: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
        strips = divide(strip, cuts)
        if len(strips) == 1 and strips[0] is strip:
            strip._divide_cache.clear()
        return strips

    def crop_extend_without_self(strip: Strip, start: int, end: int, style: Style | None) -> Strip:
        cropped = crop_extend(strip, start, end, style)
        if cropped is strip:
            strip._crop_extend_cache.clear()
        return cropped

    # mypy reads a function stored on a class as if it were already bound:
    Strip.divide = divide_without_self  # type: ignore[method-assign, assignment]
    Strip.crop_extend = crop_extend_without_self  # type: ignore[method-assign, assignment]
    Strip._cycles_broken = True  # type: ignore[attr-defined]
