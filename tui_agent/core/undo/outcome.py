"""What an undo did (UndoResult) and how it is told to the person and the model."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tui_agent.core.undo.ignored import NotUndone, summary
from tui_agent.core.undo.journal import TurnRecord
from tui_agent.core.undo.transaction import Resumed


@dataclass
class UndoResult:
    """What an undo did: `ok` False means nothing in the work tree was changed (`conflict_diff` says why)."""

    ok: bool
    message: str
    restored: list[str] = field(default_factory=list)
    catalog: list[str] = field(default_factory=list)
    conflict_diff: str = ""
    kept: list[str] = field(default_factory=list)
    """Files changed during the turns but not by the agent's calls: left as they are."""
    ignored_restored: list[str] = field(default_factory=list)
    """Git-ignored files the turns' runs changed, put back (a created one removed)."""
    ignored_not_undone: list[NotUndone] = field(default_factory=list)
    """Git-ignored files the turns' runs changed that undo left as they are, each with the reason."""

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "message": self.message, "restored": self.restored, "catalog": self.catalog,
                "kept": self.kept, "conflict_diff": self.conflict_diff, "ignored_restored": self.ignored_restored,
                "ignored_not_undone": [item.to_json() for item in self.ignored_not_undone]}

    @property
    def note_for_model(self) -> str:
        """What the model is told before its next request, so that it does not redo what was undone."""
        return (f"[tuiagent: the user undid your changes. {self.message} The conversation above still shows them; "
                "do not make them again unless the user asks.]")


def undone(turns: list[TurnRecord], kept_paths: list[str], restored: list[str], catalog: list[str],
           ignored_back: list[str], ignored_left: list[NotUndone]) -> UndoResult:
    """The result of an undo that completed: the files put back, the tools taken back, and what was kept or set aside."""
    files = f"{len(restored)} file(s) put back: {', '.join(restored)}" if restored else "no project file to put back"
    kept = (f" Kept as they are: {', '.join(kept_paths)} (changed by someone else during the turn, you or another "
            "program, not by the agent's calls; undo takes back only what the agent changed)." if kept_paths else "")
    ignored = summary(ignored_back, ignored_left)
    aside = [f"{path} (in {where})" for turn in turns for path, where in turn.set_aside]
    kept += (f" The run's own versions of files you changed meanwhile were set aside: {', '.join(aside)}."
             if aside else "")
    return UndoResult(True, f"Undid {label(turns)}: {files}." + (" " + "; ".join(catalog) + "." if catalog else "") + kept
                      + (" " + ignored if ignored else ""), restored, catalog, kept=kept_paths,
                      ignored_restored=ignored_back, ignored_not_undone=ignored_left)


def resumed_message(resumed: Resumed, catalog: list[str]) -> str:
    left = f"; kept as you changed them since: {', '.join(resumed.left)}" if resumed.left else ""
    return (f"The undo of {label(resumed.turns)} was interrupted; it is now complete: "
            f"{len(resumed.restored)} more file(s) put back{left}" + ("; " + "; ".join(catalog) if catalog else "") + ".")


def label(turns: list[TurnRecord]) -> str:
    if len(turns) == 1:
        return f"turn {turns[0].turn} ({turns[0].prompt[:50]!r})"
    return f"turns {turns[0].turn}-{turns[-1].turn}"
