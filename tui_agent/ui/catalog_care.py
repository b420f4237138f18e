"""The TUI side of catalog care: open the care view, then author, dismiss, prune, repair or prompt as the person chose."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from tui_agent.core.tending.care import author_prompt, care_report
from tui_agent.core.tending.repair import repair_prompt
from tui_agent.core.tending.suggestions import SuggestionBook
from tui_agent.ui.catalog_rows import CatalogRow
from tui_agent.ui.screens.catalog_care import CareChoice, CatalogCareScreen
from tui_agent.core.runtime_state import catalog_of, suggestions_of

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from tui_agent.ui.catalog_actions import CatalogActions
    from tui_agent.ui.host import UIHost


async def open_catalog_care(app: UIHost, actions: CatalogActions) -> None:
    """Show suggestions and findings; act on the one the person picks."""
    catalog = catalog_of(app.state)
    if catalog is None:
        app.notify("the tool catalog is not open", severity="warning")
        return
    report = await asyncio.to_thread(care_report, catalog)
    choice: CareChoice | None = await app.ask(CatalogCareScreen(report))
    if choice is None:
        return
    chain = next((chain for chain in report.suggestions if chain.id == choice.suggestion_id), None)
    if choice.action == "author" and chain is not None:
        await actions.submit_prompt(author_prompt(chain))
    elif choice.action == "dismiss" and chain is not None:
        book = SuggestionBook(catalog.project.sessions_dir, catalog.state)
        await asyncio.to_thread(book.dismiss, chain.id)
        app.notify(f"suggestion {' → '.join(chain.steps)} dismissed for good")
    elif choice.action == "act" and 0 <= choice.finding < len(report.findings):
        finding = report.findings[choice.finding]
        if finding.action == "prune":
            await actions.prune(CatalogRow(finding.tools[0], "tool", finding.kind, 0, None, finding.detail))
        elif finding.action in ("repair", "fix"):
            await repair_tool(app, actions.submit_prompt, finding.tools[0])
        elif finding.prompt:
            await actions.submit_prompt(finding.prompt)
        else:
            app.notify(finding.command)


async def repair_tool(app: UIHost, submit_prompt: Callable[[str], Awaitable[None]], name: str) -> None:
    """Hand the agent the tool's drift diff, failing test output and source (the `R` key, `tuiagent tools repair`)."""
    catalog = catalog_of(app.state)
    record = catalog.get(name) if catalog is not None else None
    if catalog is None or record is None:
        app.notify(f"no tool named {name}", severity="warning")
        return
    reports = await catalog.drift(name) if record.spec is not None else []
    report = reports[0] if reports else None
    if record.status != "broken" and (report is None or (not report.drifted and report.tests_pass is not False)):
        app.notify(f"{name} needs no repair: not broken, not drifted, and its tests pass")
        return
    await submit_prompt(repair_prompt(record, report, catalog.source(name) or ""))


async def suggestion_action(app: UIHost, actions: CatalogActions, action: str, chain_id: str) -> None:
    """A key on a `suggested` row: a asks the agent to author the tool, x dismisses it for good, others open care."""
    book = suggestions_of(app.state)
    chain = next((chain for chain in await asyncio.to_thread(book.current) if chain.id == chain_id), None) if book else None
    if book is None or chain is None:
        app.notify("that suggestion is gone (authored, covered or dismissed)", severity="warning")
    elif action == "author":
        await actions.submit_prompt(author_prompt(chain))
    elif action == "dismiss":
        await asyncio.to_thread(book.dismiss, chain.id)
        app.notify(f"suggestion {' → '.join(chain.steps)} dismissed for good")
    else:
        await open_catalog_care(app, actions)
    app.schedule_catalog_refresh()
