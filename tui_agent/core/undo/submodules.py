"""Checkpoints inside the project's submodules: the superproject's checkpoints see only a submodule's commit (its
gitlink), so each checked-out submodule's files are snapshotted by its own git, and undo takes them back too."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tui_agent.core.undo.journal import CallWindow, SubmoduleWindows, TurnRecord
from tui_agent.core.versioning.checkpoints import Checkpoints, GitFailure



def sub_turn(turn: TurnRecord, windows: SubmoduleWindows) -> TurnRecord:
    """The turn as seen inside one submodule, for plan_undo with that submodule's checkpoints."""
    return TurnRecord(turn.turn, turn.prompt, windows.before, windows.after, calls=windows.calls)


def inner_paths(path: str, paths: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """A call's writable repository paths as paths inside the submodule at `path` (None: any file)."""
    if paths is None:
        return None
    return tuple(p[len(path) + 1:] for p in paths if p.startswith(path + "/"))


class Submodules:
    """The checked-out submodules inside one project, each with its own Checkpoints (opened once, kept)."""

    def __init__(self, checkpoints: Checkpoints) -> None:
        self.parent = checkpoints
        self._opened: dict[str, Checkpoints | None] = {}

    def paths(self) -> list[str]:
        """Repository paths of the submodules (.gitmodules) inside the project that are checked out."""
        gitmodules = self.parent.work_tree / ".gitmodules"
        if not gitmodules.is_file():
            return []
        result = self.parent.runner.run("config", "-z", "-f", str(gitmodules), "--get-regexp", r"^submodule\..*\.path$")
        found: list[str] = []
        for record in result.stdout.decode("utf-8", "surrogateescape").split("\0") if result.ok else []:
            _key, _, path = record.partition("\n")
            path = path.strip("/")
            if (path and ".." not in path.split("/") and path.startswith(self.parent.prefix)
                    and (self.parent.work_tree / path / ".git").exists()):
                found.append(path)
        return sorted(found)

    def checkpoints(self, path: str) -> Checkpoints | None:
        if path not in self._opened:
            opened = Checkpoints.open(self.parent.work_tree / path)
            self._opened[path] = opened if opened is not None and opened.work_tree == (self.parent.work_tree / path).resolve() else None
        return self._opened[path]

    def snapshot(self, paths: list[str]) -> dict[str, str]:
        """path -> tree of the submodule's files now (a submodule that cannot be snapshotted is left out)."""
        trees: dict[str, str] = {}
        for path in paths:
            checkpoints = self.checkpoints(path)
            if checkpoints is None:
                continue
            try:
                trees[path] = checkpoints.snapshot()
            except (GitFailure, OSError):
                continue
        return trees

    def changed(self, before: dict[str, str], after: dict[str, str]) -> list[str]:
        """Repository paths of the files that differ inside the submodules between two snapshots."""
        changed: list[str] = []
        for path in sorted(set(before) & set(after)):
            checkpoints = self.checkpoints(path)
            if checkpoints is not None and before[path] != after[path]:
                changed += [f"{path}/{inner}" for inner in checkpoints.changed_paths(before[path], after[path])]
        return changed


class SubmoduleRecorder:
    """Records one turn inside the submodules, alongside the superproject's checkpoints (the same moments)."""

    def __init__(self, checkpoints: Checkpoints) -> None:
        self.submodules = Submodules(checkpoints)
        self._paths: list[str] = []
        self._turn: dict[str, SubmoduleWindows] = {}
        self._call_before: dict[str, str] | None = None
        self._heads: dict[str, str | None] = {}
        self.last: dict[str, SubmoduleWindows] = {}

    def begin(self) -> None:
        self._paths = self.submodules.paths()
        self._turn = {path: SubmoduleWindows(tree) for path, tree in self.submodules.snapshot(self._paths).items()}
        self._heads = self._current_heads()
        self._call_before, self.last = None, {}

    def _current_heads(self) -> dict[str, str | None]:
        return {path: checkpoints.runner.head() for path in self._paths
                if (checkpoints := self.submodules.checkpoints(path)) is not None}

    def moved_heads(self) -> list[str]:
        """The submodules whose commit (HEAD) the turn moved: undo puts their files back, not their history."""
        now = self._current_heads()
        return sorted(path for path, head in self._heads.items() if path in now and now[path] != head)

    def call_started(self) -> None:
        self._call_before = self.submodules.snapshot(self._paths) if self._turn else None

    def call_finished(self, paths: tuple[str, ...] | None) -> None:
        if self._call_before is None:
            return
        after = self.submodules.snapshot(self._paths)
        for path, windows in self._turn.items():
            if windows.calls is not None and path in self._call_before and path in after:
                windows.calls.append(CallWindow(self._call_before[path], after[path], inner_paths(path, paths)))
            elif windows.calls is not None:
                windows.calls = None  # a call not checkpointed: every change of the turn counts as the agent's
        self._call_before = None

    def end(self) -> dict[str, SubmoduleWindows]:
        """The windows of the submodules whose files changed during the turn (kept as `last`)."""
        after = self.submodules.snapshot(self._paths)
        changed: dict[str, SubmoduleWindows] = {}
        for path, windows in self._turn.items():
            if path in after and after[path] != windows.before:
                windows.after = after[path]
                changed[path] = windows
        self._turn, self.last = {}, changed
        return changed

    def last_paths(self, turn: TurnRecord) -> list[str]:
        """Repository paths of the files the last turn's calls wrote inside submodules."""
        from tui_agent.core.undo.plan import agent_paths

        found: list[str] = []
        for path, windows in sorted(self.last.items()):
            checkpoints = self.submodules.checkpoints(path)
            if checkpoints is not None:
                found += [f"{path}/{inner}" for inner in agent_paths(checkpoints, sub_turn(turn, windows))]
        return found


@dataclass
class SubmodulePlan:
    """The undo inside each submodule: its checkpoints and plan; `conflict` names the first one the person changed."""

    plans: list[tuple[str, Checkpoints, Any]] = field(default_factory=list)
    conflict: tuple[str, Any] | None = None
    unavailable: list[str] = field(default_factory=list)
    nows: dict[str, str] = field(default_factory=dict)
    """Each submodule's checkpoint just before the undo (kept in the undo's intent, to finish it after a kill)."""


def plan_submodules(recorder: SubmoduleRecorder, turns: list[TurnRecord]) -> SubmodulePlan:
    """Plan the undo inside every submodule the turns changed, with the same rules as the superproject's plan."""
    from tui_agent.core.undo.plan import plan_undo
    from tui_agent.core.undo.restore import check_changes

    result = SubmodulePlan()
    for path in sorted({path for turn in turns for path in turn.submodules}):
        checkpoints = recorder.submodules.checkpoints(path)
        sub_turns = [sub_turn(turn, turn.submodules[path]) for turn in turns if path in turn.submodules]
        if checkpoints is None or not all(checkpoints.is_tree(t.before) and checkpoints.is_tree(str(t.after))
                                          for t in sub_turns):
            result.unavailable.append(path)
            continue
        result.nows[path] = checkpoints.snapshot()
        plan = plan_undo(checkpoints, sub_turns, result.nows[path])
        if not plan.ok:
            result.conflict = (path, plan)
            return result
        check_changes(checkpoints, plan.changes())  # refused before anything is written
        result.plans.append((path, checkpoints, plan))
    return result


def apply_submodules(plan: SubmodulePlan, progress: Callable[[int, int], None] | None = None) -> list[str]:
    """Put the files back inside each submodule (progress told per submodule); their repository paths."""
    from tui_agent.core.undo.restore import apply_changes

    restored: list[str] = []
    for path, checkpoints, sub_plan in plan.plans:
        restored += [f"{path}/{inner}" for inner in apply_changes(checkpoints, sub_plan.changes(), progress)]
    return restored
