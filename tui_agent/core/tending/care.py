"""What the catalog needs this morning: suggested tools and doctor findings, as one report for the CLI and the TUI."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from tui_agent.core.agent.system_prompt import catalog_index, entries_from_records, estimate_tokens, rank
from tui_agent.core.tending.chains import Chain
from tui_agent.core.tending.doctor import DoctorInput, Finding, examine, summary
from tui_agent.core.tending.suggestions import SuggestionBook

if TYPE_CHECKING:
    from tui_agent.core.catalog.api import Catalog


@dataclass(frozen=True)
class CareReport:
    """Suggested tools (repeated chains), doctor findings and the summary numbers."""

    suggestions: list[Chain]
    findings: list[Finding]
    numbers: dict[str, Any] = field(default_factory=dict)


def doctor_input(catalog: Catalog, unused_days: int = 30) -> DoctorInput:
    records = catalog.tools()
    settings = catalog.project.load_settings()
    index = catalog_index(rank(entries_from_records(records)), settings.catalog_token_budget)
    return DoctorInput(records=records, source=catalog.source, authored_at=lambda name: first_commit_time(catalog, name),
                       index_tokens=estimate_tokens(index), token_budget=settings.catalog_token_budget,
                       unused_days=unused_days)


def care_report(catalog: Catalog, unused_days: int = 30) -> CareReport:
    data = doctor_input(catalog, unused_days)
    findings = examine(data)
    suggestions = SuggestionBook(catalog.project.sessions_dir, catalog.state).current()
    return CareReport(suggestions, findings, summary(data, findings))


def first_commit_time(catalog: Catalog, name: str) -> float | None:
    entries = catalog.history(name)
    if not entries:
        return None
    try:
        return datetime.fromisoformat(entries[-1].date).timestamp()
    except ValueError:
        return None


def author_prompt(chain: Chain) -> str:
    """What a person's 'author it' key asks the agent."""
    from tui_agent.core.tending.suggestions import describe

    return (describe(chain).replace("[tuiagent] ", "") + "\n\nWrite that tool now with create_tool, "
            "with test_* functions, and use it from now on.")
