"""Taking back the tools and recipes turns authored: what undo will do to each (pruned, reverted, kept because it
was changed since), decided once, so the /undo question says exactly what the undo then does."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from tui_agent.core.errors import PROJECT_FAILURES
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.undo.journal import Authored, TurnRecord
from tui_agent.core.versioning.gitqueries import HistoryEntry


class VersionedStore(Protocol):
    """The catalog or the recipe engine: what undo needs to take a tool or recipe back."""

    def history(self, name: str) -> list[HistoryEntry]: ...
    async def revert(self, name: str, rev: str | None = None) -> Any: ...
    async def prune(self, name: str) -> Any: ...


Stores = dict[str, "VersionedStore | None"]


@dataclass(frozen=True)
class Decision:
    """What undo does to one authored item: "prune", "revert", "keep" (changed since) or "closed" (no store)."""

    kind: str
    name: str
    item: Authored
    action: str

    def question(self) -> str:
        return {"prune": f"{self.kind} {self.name} (pruned)", "revert": f"{self.kind} {self.name} (reverted)",
                "keep": f"{self.kind} {self.name} (kept: changed after the agent wrote it)",
                "closed": f"{self.kind} {self.name} (NOT taken back: the {self.kind} store is not open)"}[self.action]


def decide(stores: Stores, turns: list[TurnRecord], session_turns: list[TurnRecord]) -> list[Decision]:
    """Newest first: prune what the turns created, revert what they updated; a tool or recipe someone changed since
    (it holds none of the versions the agent wrote) is kept."""
    first: dict[tuple[str, str], Authored] = {}
    for turn in turns:
        for item in turn.authored:
            first.setdefault((item.kind, item.name), item)
    decisions: list[Decision] = []
    for (kind, name), item in reversed(list(first.items())):
        store = stores.get(kind)
        if store is None:
            decisions.append(Decision(kind, name, item, "closed"))
            continue
        agent_versions = {a.commit for turn in session_turns for a in turn.authored
                          if (a.kind, a.name) == (kind, name) and a.commit}
        action = "keep" if _changed_by_someone_else(store, name, agent_versions) else (
            "prune" if item.created else "revert")
        decisions.append(Decision(kind, name, item, action))
    return decisions


def preview(stores: Stores, turns: list[TurnRecord], session_turns: list[TurnRecord]) -> list[str]:
    return [decision.question() for decision in decide(stores, turns, session_turns)]


async def take_back(stores: Stores, turns: list[TurnRecord], session_turns: list[TurnRecord], skip: set[str],
                    done_one: Callable[[str], None]) -> list[str]:
    """Carry out the decisions (through the stores), each marked done as it is; one sentence each."""
    done: list[str] = []
    for decision in decide(stores, turns, session_turns):
        kind, name, item = decision.kind, decision.name, decision.item
        if f"{kind}:{name}" in skip:
            continue  # taken back before an interruption
        store = stores.get(kind)
        if decision.action == "closed" or store is None:
            done.append(f"{kind} {name} NOT taken back (the {kind} store is not open)")
            continue
        if decision.action == "keep":
            done.append(f"{kind} {name} kept as it is: it was changed after the agent wrote it (its history has "
                        "the agent's versions)")
            continue
        try:
            if decision.action == "prune":
                await store.prune(name)
                done.append(f"{kind} {name} pruned (/restore brings it back)")
            else:
                await store.revert(name, _version_before(store, name, item.commit))
                done.append(f"{kind} {name} reverted to its version before the turn")
            done_one(f"{kind}:{name}")
        except PROJECT_FAILURES as error:  # the files are back, say what is left
            done.append(f"{kind} {name} NOT taken back: {error.message if isinstance(error, PipelineError) else error}")
    return done


def _changed_by_someone_else(store: VersionedStore, name: str, agent_versions: set[str]) -> bool:
    """Whether the file holds none of the versions the agent committed (an empty diff from one means it does)."""
    diff = getattr(store, "diff", None)
    if diff is None or not agent_versions:
        return False  # nothing to compare with (a deferred commit): take it back as before
    for commit in agent_versions:
        try:
            if diff(name, commit) == "":
                return False
        except PROJECT_FAILURES:  # that version cannot be read; try the others
            continue
    return True


def _version_before(store: VersionedStore, name: str, commit: str | None) -> str | None:
    """The commit holding the version just before `commit`; None lets the store pick its previous version."""
    if commit is None:
        return None
    history = [entry for entry in store.history(name) if not entry.deleted]
    for index, entry in enumerate(history):
        if entry.rev == commit and index + 1 < len(history):
            return history[index + 1].rev
    return None
