"""The key footer's row, held from the first frame until the footer itself is mounted there (once the project has opened)."""

from __future__ import annotations

from textual.widget import MountError
from textual.widgets import Static


class FooterSlot(Static):
    """An empty row docked where the footer goes, so nothing moves when the footer takes its place."""

    async def become_footer(self) -> None:
        """Mount the footer in this row and leave: composing its keys takes tens of ms of the interpreter's time, which
        a prompt typed at first paint would otherwise wait for. Nothing when the screen is going (quit meanwhile)."""
        from textual.widgets import Footer

        screen = self.screen
        if not self.is_mounted or not screen.is_mounted:
            return
        try:
            await screen.mount(Footer(compact=True), before=self)
        except MountError:  # the app ended meanwhile (quit at the git question)
            return
        await self.remove()
        screen.refresh_bindings()  # a footer shows its keys once the bindings are published
