"""Textual's `Strip` made light for the garbage collector: its caches made on first use, none holding the strip itself.

A strip (one rendered line) carried seven cache objects from birth, most never used: over half of the objects each
full collection walked while a long session was paged. And a strip that answered `divide` or `crop_extend` with
itself kept itself in its own cache, a reference cycle only a full collection could free. Patched in place, guarded
by the exact slot layout of the Textual version it was written for (8.x): another layout is left as it is."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from textual.cache import FIFOCache
from textual.strip import Strip

if TYPE_CHECKING:
    from rich.segment import Segment
    from rich.style import Style

CACHE_SIZES = {
    "_divide_cache": 4,
    "_crop_cache": 16,
    "_style_cache": 16,
    "_filter_cache": 4,
    "_line_length_cache": 4,
    "_crop_extend_cache": 4,
    "_offsets_cache": 4,
}
"""Each of Strip's caches and the size Textual gives it."""
OTHER_SLOTS = {"_segments", "_cell_length", "_render_cache", "_link_ids", "_cell_count"}


def install() -> None:
    """Patch `Strip` (once; call before the first frame)."""
    if "_lean" in vars(Strip) or set(Strip.__slots__) != set(CACHE_SIZES) | OTHER_SLOTS:
        return
    original_divide = Strip.divide
    original_crop_extend = Strip.crop_extend

    def __init__(strip: Strip, segments: Iterable[Segment], cell_length: int | None = None) -> None:
        strip._segments = list(segments)
        strip._cell_length = cell_length
        strip._render_cache = None
        strip._link_ids = None
        strip._cell_count = None

    def __getattr__(strip: Strip, name: str) -> FIFOCache[object, object]:
        """A cache slot read for the first time: make that cache now."""
        size = CACHE_SIZES.get(name)
        if size is None:
            raise AttributeError(f"'Strip' object has no attribute {name!r}")
        cache: FIFOCache[object, object] = FIFOCache(size)
        object.__setattr__(strip, name, cache)
        return cache

    def divide(strip: Strip, cuts: Iterable[int]) -> Sequence[Strip]:
        strips = original_divide(strip, cuts)
        if len(strips) == 1 and strips[0] is strip:
            strip._divide_cache.clear()
        return strips

    def crop_extend(strip: Strip, start: int, end: int, style: Style | None) -> Strip:
        cropped = original_crop_extend(strip, start, end, style)
        if cropped is strip:
            strip._crop_extend_cache.clear()
        return cropped

    # mypy reads a function stored on a class as if it were already bound:
    Strip.__init__ = __init__  # type: ignore[method-assign, assignment]
    Strip.__getattr__ = __getattr__  # type: ignore[attr-defined]
    Strip.divide = divide  # type: ignore[method-assign, assignment]
    Strip.crop_extend = crop_extend  # type: ignore[method-assign, assignment]
    Strip._lean = True  # type: ignore[attr-defined]
