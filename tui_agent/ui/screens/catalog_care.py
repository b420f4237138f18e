"""The catalog care view: suggested tools (repeated call chains) and the doctor's findings, each one key from its action."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, Static

from tui_agent.core.tending.care import CareReport

KIND_STYLES = {"suggested": "bold #61afef", "broken": "bold red", "drifted": "bold yellow", "untested": "#e5c07b",
               "never-called": "dim", "unused": "dim", "near-duplicate": "#c678dd", "budget": "bold #e5c07b"}


@dataclass(frozen=True)
class CareChoice:
    """What the person chose: `author` or `dismiss` a suggestion, or `act` on a finding (its index)."""

    action: str
    suggestion_id: str = ""
    finding: int = -1


class CatalogCareScreen(ModalScreen[CareChoice | None]):
    """Rows: suggestions first (a authors, x dismisses for good), then findings (enter performs the action shown)."""

    DEFAULT_CSS = """
    CatalogCareScreen { align: center middle; }
    #care-dialog { width: 90%; height: 85%; border: round $accent; background: $surface; padding: 0 1; }
    #care-summary { height: auto; color: $text-muted; }
    #care-table { height: 1fr; }
    """
    BINDINGS = [
        Binding("a", "choose('author')", "Author it"),
        Binding("x", "choose('dismiss')", "Dismiss"),
        Binding("enter", "choose('act')", "Do it", priority=True),
        Binding("escape,q", "close", "Close"),
    ]
    AUTO_FOCUS = "#care-table"

    def __init__(self, report: CareReport) -> None:
        super().__init__()
        self.report = report

    def compose(self) -> ComposeResult:
        numbers = self.report.numbers
        with Vertical(id="care-dialog"):
            yield Static(Text.assemble(("Catalog care  ", "bold"), (
                f"{len(self.report.suggestions)} suggested, {numbers.get('broken', 0)} broken, "
                f"{numbers.get('drifted', 0)} drifted, {numbers.get('untested', 0)} untested, "
                f"{numbers.get('never-called', 0)} never called, {numbers.get('unused', 0)} unused; index "
                f"{numbers.get('index_tokens', 0)}/{numbers.get('token_budget', 0)} prompt tokens", "dim")), id="care-summary")
            table: DataTable[Text] = DataTable(id="care-table", cursor_type="row", zebra_stripes=True)
            for label, width in (("kind", 14), ("what", 40), ("detail", None)):
                table.add_column(label, width=width)
            for chain in self.report.suggestions:
                varied = ", ".join(str(values[0]) for values in chain.varied_values()) or "same arguments"
                table.add_row(Text("suggested", style=KIND_STYLES["suggested"]), Text(" → ".join(chain.steps)),
                              Text(f"ran {chain.count}× in {len(chain.sessions)} session(s); varied: {varied}  (a author · x dismiss)"))
            for finding in self.report.findings:
                table.add_row(Text(finding.kind, style=KIND_STYLES.get(finding.kind, "")), Text(", ".join(finding.tools) or "catalog"),
                              Text(f"{finding.detail}  (enter: {finding.action})"))
            if not self.report.suggestions and not self.report.findings:
                table.add_row(Text("all good", style="green"), Text("no suggestion, no finding"), Text(""))
            yield table
            yield Footer()

    def _selected(self) -> tuple[str, int]:
        row = self.query_one(DataTable).cursor_row
        if 0 <= row < len(self.report.suggestions):
            return "suggestion", row
        index = row - len(self.report.suggestions)
        return ("finding", index) if 0 <= index < len(self.report.findings) else ("none", -1)

    def action_choose(self, action: str) -> None:
        kind, index = self._selected()
        if kind == "suggestion":
            chosen = "author" if action in ("author", "act") else "dismiss"
            self.dismiss(CareChoice(chosen, suggestion_id=self.report.suggestions[index].id))
        elif kind == "finding" and action == "act":
            self.dismiss(CareChoice("act", finding=index))
        else:
            self.notify("a and x act on a suggested tool; enter performs a finding's action", severity="warning")

    def action_close(self) -> None:
        self.dismiss(None)
