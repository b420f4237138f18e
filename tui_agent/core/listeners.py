"""tell(): call one listener; its failure is logged and stays its own, so one bad view never stops the sender."""

from __future__ import annotations

import logging
from collections.abc import Callable

log = logging.getLogger(__name__)


def tell(call: Callable[[], object], what: str) -> bool:
    """Run `call` (a listener given its event); False, with the failure logged as `what`, when it raised."""
    try:
        call()
    except Exception:  # edge: a listener is another part's or a front end's code; any failure of it stays its own
        log.exception("%s failed", what)
        return False
    return True
