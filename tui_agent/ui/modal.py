"""Asking with a modal: push a screen and wait for its result, from a worker or from any task on the app's loop."""

from __future__ import annotations

import asyncio
from typing import Any, TypeVar

from textual.app import App
from textual.screen import Screen
from textual.worker import NoActiveWorker, get_current_worker

ScreenResult = TypeVar("ScreenResult")


async def ask_modal(app: App[Any], screen: Screen[ScreenResult]) -> ScreenResult | None:
    """`screen`'s result (None if dismissed without one); cancelling the wait closes the screen."""
    try:
        get_current_worker()
    except NoActiveWorker:
        future: asyncio.Future[ScreenResult | None] = asyncio.get_running_loop().create_future()

        def deliver(result: ScreenResult | None) -> None:
            if not future.done():
                future.set_result(result)

        app.push_screen(screen, callback=deliver)
        try:
            return await future
        except asyncio.CancelledError:
            if screen.is_attached:
                screen.dismiss(None)
            raise
    try:
        return await app.push_screen(screen, wait_for_dismiss=True)
    except asyncio.CancelledError:
        if screen in app.screen_stack:
            app.pop_screen()
        raise
