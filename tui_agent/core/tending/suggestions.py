"""Suggested tools: repeated chains not yet covered or dismissed, offered to the model once and listed for people."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.core.agent.sessions import read_records
from tui_agent.core.catalog.state import StateStore
from tui_agent.core.content import ContentBlock, json_object, text_block
from tui_agent.core.versioning.store_interface import StoreItem
from tui_agent.core.tending.chains import Call, Chain, calls_in_session, find_chains
from tui_agent.core.tending.peer_calls import peer_transcripts

RECENT_SESSIONS = 30
SHOWN_VALUES = 3


@dataclass(frozen=True)
class AuthoredTool:
    """A catalog tool written in a session and then called there."""

    name: str
    authored_at: float


def recent_sessions(sessions_dir: Path, limit: int = RECENT_SESSIONS) -> list[Path]:
    """The newest transcripts: the person's sessions and the calls other agents made over MCP (`peer_calls`)."""
    if not sessions_dir.is_dir():
        return []
    found = [*sessions_dir.glob("*.jsonl"), *peer_transcripts(sessions_dir)]
    paths = sorted(found, key=lambda path: (path.stat().st_mtime, path.name))
    return paths[-limit:]


def authored_and_used(path: Path) -> list[AuthoredTool]:
    """Tools authored in the session that were called afterwards (directly or through `call_tool`)."""
    authored: dict[str, float] = {}
    used: list[AuthoredTool] = []
    for record in read_records(path):
        data = record.get("data")
        if record.get("type") != "event" or not isinstance(data, dict):
            continue
        if record.get("event") == "ToolAuthored" and data.get("kind") == "tool":
            authored.setdefault(str(data.get("name")), _number(record.get("time")))
        elif record.get("event") == "ToolCallStarted":
            raw = data.get("arguments")
            arguments = json_object(raw)
            name = str(arguments.get("name")) if data.get("name") == "call_tool" else str(data.get("name"))
            if name in authored:
                used.append(AuthoredTool(name, authored.pop(name)))
    return used


class SuggestionBook:
    """Mines recent sessions for chains and keeps their fate (offered, dismissed, covered) in `state.db`."""

    def __init__(self, sessions_dir: Path, state: StateStore) -> None:
        self.sessions_dir = sessions_dir
        self.state = state
        self._parsed: dict[Path, tuple[tuple[int, int], list[Call], list[AuthoredTool]]] = {}

    def _read(self, path: Path) -> tuple[list[Call], list[AuthoredTool]]:
        """A session's calls and answered tools, parsed again only when the file changed."""
        stat = path.stat()
        key = (stat.st_mtime_ns, stat.st_size)
        cached = self._parsed.get(path)
        if cached is None or cached[0] != key:
            cached = (key, calls_in_session(path), authored_and_used(path))
            self._parsed[path] = cached
        return cached[1], cached[2]

    def current(self) -> list[Chain]:
        """Chains worth a tool now: repeated, not dismissed, not answered by a tool written and used since."""
        parsed = [self._read(path) for path in recent_sessions(self.sessions_dir)]
        chains = find_chains(calls for calls, _ in parsed)
        answers = [tool for _, tools in parsed for tool in tools]
        ledger = self.state.suggestions()
        open_chains: list[Chain] = []
        for chain in chains:
            status, since, _ = ledger.get(chain.id, ("new", chain.last_seen, None))
            if status in ("dismissed", "covered"):
                continue
            answer = next((tool for tool in answers if tool.authored_at >= min(since, chain.last_seen)), None)
            if answer is not None:
                self.state.set_suggestion(chain.id, "covered", _steps(chain), answer.name)
                continue
            open_chains.append(chain)
        return open_chains

    def note_for_next_request(self, *, turn_running: bool = False) -> str | None:
        """The chains not yet offered, as one short note for the model; each is offered once.

        While a turn runs, a chain that ends at the newest call is offered at once when it cannot grow (the second
        repetition is complete: the earlier one was not followed by a further common step), so the note reaches the
        request right after it; one that may still grow (step 3 of a 4-step workflow) waits for the next call.
        """
        ledger = self.state.suggestions()
        fresh = [chain for chain in self.current() if chain.id not in ledger]
        if turn_running:
            fresh = [chain for chain in fresh if not self._may_still_grow(chain)]
        for chain in fresh:
            self.state.set_suggestion(chain.id, "offered", _steps(chain))
        return "\n".join(describe(chain) for chain in fresh) or None

    def _may_still_grow(self, chain: Chain) -> bool:
        """True when the chain ends at the newest call and every earlier repetition went on with the same next tool
        (the newest one may be about to take that step too); a repetition's next call that starts another
        repetition of the chain does not count as a step of it."""
        paths = recent_sessions(self.sessions_dir, limit=1)
        newest_calls = self._read(paths[0])[0] if paths else []
        newest = (newest_calls[-1].session, newest_calls[-1].position) if newest_calls else None
        if not any((o.calls[-1].session, o.calls[-1].position) == newest for o in chain.occurrences):
            return False
        by_session = {path.stem: self._read(path)[0] for path in recent_sessions(self.sessions_dir)}
        starts = {(o.calls[0].session, o.calls[0].position) for o in chain.occurrences}
        next_tools: set[str] = set()
        for occurrence in chain.occurrences:
            last = occurrence.calls[-1]
            if (last.session, last.position) == newest:
                continue
            calls = by_session.get(last.session, [])
            following = calls[last.position + 1] if last.position + 1 < len(calls) else None
            if following is None or (following.session, following.position) in starts:
                return False
            next_tools.add(following.tool)
        return len(next_tools) == 1

    def dismiss(self, chain_id: str) -> bool:
        """Never suggest this chain again; False when no current suggestion has that id."""
        chain = next((chain for chain in self.current() if chain.id == chain_id), None)
        if chain is None:
            return False
        self.state.set_suggestion(chain.id, "dismissed", _steps(chain))
        return True


def describe(chain: Chain) -> str:
    """One line for the model: the chain, how often it ran, what varied, and the suggestion."""
    varied = "; ".join(
        f"{' = '.join(slots)}: {', '.join(repr(value) for value in values[:SHOWN_VALUES])}"
        for slots, values in zip(chain.parameters, chain.varied_values(), strict=True)
    )
    what_varied = f" What varied: {varied}." if varied else " The arguments were the same each time."
    return (f"[tuiagent] Repeated call chain {_steps(chain)} ran {chain.count} times "
            f"(in {len(chain.sessions)} session(s)).{what_varied} If it will come up again, consider create_tool "
            f"for one tool that does the whole chain, taking what varied as arguments (suggestion {chain.id}).")


def as_row(chain: Chain) -> StoreItem:
    """The catalog pane's `suggested` row: the chain's id (what `tools suggest --dismiss` takes) and the chain."""
    varied = ", ".join(repr(values[0]) for values in chain.varied_values()) or "same arguments"
    summary = f"{_steps(chain)} ran {chain.count}× (varied: {varied}) · a: ask the agent to author it · x: dismiss"
    return StoreItem(name=chain.id, kind="suggestion", status="suggested", calls=chain.count, last_used=chain.last_seen,
                     summary=summary)


def to_report(chain: Chain) -> dict[str, Any]:
    return chain.to_dict() | {"chain": _steps(chain), "note": describe(chain)}


def _steps(chain: Chain) -> str:
    return " → ".join(chain.steps)


def _number(value: Any) -> float:
    return float(value) if isinstance(value, int | float) else 0.0


def suggestion_blocks(book: SuggestionBook | None, *, turn_running: bool) -> list[ContentBlock]:
    """Repeated call chains not offered before, as one text block for the next request (each offered once)."""
    if book is None:
        return []
    try:
        note = book.note_for_next_request(turn_running=turn_running)
    except (OSError, sqlite3.Error):  # suggestions are a hint; an unreadable transcript or db must not stop the turn
        return []
    return [text_block(note)] if note else []
