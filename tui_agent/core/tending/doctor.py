"""The catalog doctor: unused, never-called, near-duplicate, broken, drifted and untested tools, and prompt budget use."""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from difflib import SequenceMatcher
from typing import Any

from tui_agent.core.catalog.models import ToolRecord

DAY = 86_400.0
NAME_SIMILARITY = 0.8
TEXT_SIMILARITY = 0.85
BUDGET_WARNING = 0.9


@dataclass(frozen=True)
class Finding:
    """One thing worth a person's attention, and the one command that acts on it."""

    kind: str  # unused | never-called | near-duplicate | broken | drifted | untested | budget
    tools: tuple[str, ...]
    detail: str
    action: str  # prune | merge | write a test | repair | fix
    command: str
    prompt: str = ""  # for the actions the agent performs (merge, write a test): what to ask it

    def to_dict(self) -> dict[str, Any]:
        return asdict(self) | {"tools": list(self.tools)}


@dataclass(frozen=True)
class DoctorInput:
    """What the doctor looks at: the catalog's records, sources, first-commit times and the prompt budget."""

    records: Sequence[ToolRecord]
    source: Callable[[str], str | None]
    authored_at: Callable[[str], float | None]
    index_tokens: int
    token_budget: int
    unused_days: int = 30
    now: float = 0.0


def examine(data: DoctorInput) -> list[Finding]:
    """Every finding: health first, then usage, duplicates and the prompt budget."""
    now = data.now or time.time()
    findings: list[Finding] = []
    for record in data.records:
        health = _health(record)
        broken = record.status == "broken"  # fix it first; its usage says nothing yet
        findings += health if broken else health + _usage(record, data.authored_at(record.name), now, data.unused_days)
    findings += near_duplicates(data.records, data.source)
    if data.token_budget and data.index_tokens > BUDGET_WARNING * data.token_budget:
        findings.append(Finding("budget", (), f"the catalog index takes {data.index_tokens} of its {data.token_budget} "
                                "prompt tokens", "prune", "prune the never-called and unused tools above, "
                                "or raise [catalog] token_budget in .agent/config.toml"))
    return findings


def summary(data: DoctorInput, findings: Sequence[Finding]) -> dict[str, Any]:
    """The morning numbers: tools, broken, drifted, untested, unused, duplicates, and the prompt budget share."""
    counts = {kind: sum(1 for finding in findings if finding.kind == kind)
              for kind in ("broken", "drifted", "untested", "never-called", "unused", "near-duplicate")}
    share = data.index_tokens / data.token_budget if data.token_budget else 0.0
    return {"tools": len(data.records), **counts, "index_tokens": data.index_tokens,
            "token_budget": data.token_budget, "budget_share": round(share, 3)}


def _health(record: ToolRecord) -> list[Finding]:
    name = record.name
    if record.status == "broken":
        where = f" (line {record.error.line})" if record.error and record.error.line else ""
        detail = f"{record.error.stage}: {record.error.message}{where}" if record.error else "broken"
        return [Finding("broken", (name,), detail, "fix", f"tuiagent tools repair {name}")]
    found: list[Finding] = []
    if record.status.startswith("drifted"):
        found.append(Finding("drifted", (name,), f"status {record.status}: its dependency files changed",
                             "repair", f"tuiagent tools repair {name}"))
    if record.spec is not None and not record.spec.tests:
        prompt = f"Write test_* functions for the catalog tool {name} (.agent/tools/{name}.py) and update it with create_tool."
        found.append(Finding("untested", (name,), "no test_* function", "write a test", _agent_command(prompt), prompt))
    return found


def _usage(record: ToolRecord, authored_at: float | None, now: float, unused_days: int) -> list[Finding]:
    name, limit = record.name, unused_days * DAY
    prune = f"tuiagent tools prune {name}"
    if record.calls == 0:
        age = f", written {int((now - authored_at) // DAY)} days ago" if authored_at else ""
        return [Finding("never-called", (name,), f"never called{age}", "prune", prune)]
    if record.last_used is not None and now - record.last_used > limit:
        days = int((now - record.last_used) // DAY)
        return [Finding("unused", (name,), f"last used {days} days ago (limit {unused_days})", "prune", prune)]
    return []


def near_duplicates(records: Sequence[ToolRecord], source: Callable[[str], str | None]) -> list[Finding]:
    """Pairs of tools with similar names, descriptions or source."""
    found: list[Finding] = []
    for index, first in enumerate(records):
        for second in records[index + 1:]:
            reason = _similarity(first, second, source)
            if reason:
                pair = (first.name, second.name)
                prompt = (f"The catalog tools {pair[0]} and {pair[1]} overlap ({reason}). Merge them into one tool "
                          "with create_tool, then prune_tool the other.")
                found.append(Finding("near-duplicate", pair, reason, "merge", _agent_command(prompt), prompt))
    return found


def _similarity(first: ToolRecord, second: ToolRecord, source: Callable[[str], str | None]) -> str:
    checks = (
        ("names", first.name, second.name, NAME_SIMILARITY),
        ("descriptions", first.description, second.description, TEXT_SIMILARITY),
        ("source", source(first.name) or "", source(second.name) or "", TEXT_SIMILARITY),
    )
    for label, a, b, threshold in checks:
        if a and b:
            ratio = SequenceMatcher(None, a, b).ratio()
            if ratio >= threshold:
                return f"similar {label}, {ratio:.0%} alike"
    return ""


def _agent_command(prompt: str) -> str:
    return f"tuiagent -p {shlex.quote(prompt)}"
