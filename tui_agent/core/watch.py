"""ProjectWatcher: the one watchfiles loop over a project; feeds the catalog, the recipes and the change feed."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import itertools
import logging
import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.core import projectfs
from tui_agent.core.changes import ChangeFeed
from tui_agent.core.events import BranchChanged, FilesChanged, UsageChanged
from tui_agent.core.project import Project
from tui_agent.core.versioning.branch import current_branch

if TYPE_CHECKING:  # watchfiles loads when the watcher runs (in a thread): a one-shot `-p` builds one but never runs it
    import watchfiles

log = logging.getLogger(__name__)

PROBE_PREFIX = ".tuiagent-watch-probe"
STEP_MS = 10
"""A batch is handed over once this long passed without a new change: every request's settle waits for its probe's
batch (10 ms: a settle of ~13 ms, where 30 ms made it ~42 ms; the watch's thread then wakes 100 times a second,
~2 ms of CPU a second against ~1.2)."""
IGNORED_DIRS = frozenset(
    {".git", ".hg", ".svn", "__pycache__", ".venv", "venv", "node_modules", ".mypy_cache", ".pytest_cache",
     ".ruff_cache", ".tox", ".nox", ".idea", ".hypothesis", ".eggs"}
)
IGNORED_SUFFIXES = (".swp", ".swx", ".swo", "~", ".tmp", ".pyc")
STATE_FILES = frozenset({"state.db", "state.db-wal"})
GIT_HEAD_FILES = frozenset({"HEAD", "packed-refs"})

GRANT_CONFIG_FILES = (".agent/config.toml", ".agent/config.local.toml")
OnNames = Callable[[set[str]], Awaitable[object]]
OnFiles = Callable[[list[str]], object]


@dataclass
class Batch:
    """One watchfiles batch, sorted by what it concerns."""

    tools: set[str] = field(default_factory=set)
    recipes: set[str] = field(default_factory=set)
    files: set[str] = field(default_factory=set)
    probes: set[str] = field(default_factory=set)
    grants: set[str] = field(default_factory=set)
    usage: bool = False
    head: bool = False


class ProjectWatcher:
    """Runs until cancelled. Tool files go to `on_tools`, recipe files to `on_recipes`, other project files to
    `on_files` and the feed (FilesChanged); state.db writes and HEAD moves are published (UsageChanged,
    BranchChanged). `ready` is set once the OS watch is live; `settle()` waits until every change made before
    the call has been handled."""

    def __init__(self, project: Project, changes: ChangeFeed | None = None, *, on_tools: OnNames | None = None,
                 on_recipes: OnNames | None = None, on_files: OnFiles | None = None, step_ms: int = STEP_MS,
                 debounce_ms: int = 1600) -> None:
        self.project = project
        self.changes = changes
        self.on_tools, self.on_recipes, self.on_files = on_tools, on_recipes, on_files
        self.on_grants: OnFiles | None = None
        """Told the files that can change what the project grants itself (its config files, `.mcp.json`)."""
        self.step_ms, self.debounce_ms = step_ms, debounce_ms
        self.ready = asyncio.Event()
        self.running = False
        self._probe_dir = project.cache_dir
        self._probe_ids = itertools.count(1)
        self._barriers: dict[str, asyncio.Event] = {}
        self._branch: str | None = None
        self._git_dir = _git_dir_inside(project.root)

    # classification ------------------------------------------------------------
    def classify(self, raw_path: str) -> tuple[str, str] | None:
        """(kind, value): ("probe", name), ("tool", name), ("recipe", name), ("usage", ""), ("head", ""),
        ("file", rel), or None to ignore."""
        path = Path(raw_path)
        if path.parent == self._probe_dir and path.name.startswith(PROBE_PREFIX):
            return ("probe", path.name)
        rel = _relative(path, raw_path, self.project.root)
        if rel is None:
            return None
        parts = rel.split("/")
        if rel in GRANT_CONFIG_FILES:
            return ("grants", rel)
        if parts[0] == ".agent":
            return _classify_agent(parts)
        if parts[0] == ".git":
            return ("head", "") if self._is_head_file(parts) else None
        if any(part in IGNORED_DIRS for part in parts[:-1]) or parts[-1].endswith(IGNORED_SUFFIXES):
            return None
        return ("file", rel)

    def _is_head_file(self, parts: list[str]) -> bool:
        if self._git_dir is None:
            return False
        inner = parts[1:]
        return (len(inner) == 1 and inner[0] in GIT_HEAD_FILES) or (len(inner) >= 3 and inner[:2] == ["refs", "heads"]
                                                                    and not inner[-1].endswith(".lock"))

    def _watch_filter(self, _change: watchfiles.Change, path: str) -> bool:
        return self.classify(path) is not None

    def sort(self, changes: Iterable[tuple[watchfiles.Change, str]]) -> Batch:
        batch = Batch()
        for _change, raw in changes:
            found = self.classify(raw)
            if found is None:
                continue
            kind, value = found
            if kind == "usage":
                batch.usage = True
            elif kind == "head":
                batch.head = True
            elif kind == "probe":
                batch.probes.add(value)
            elif kind == "tool":
                batch.tools.add(value)
            elif kind == "recipe":
                batch.recipes.add(value)
            elif kind == "grants":
                batch.grants.add(value)
            else:
                batch.files.add(value)
                if value == ".mcp.json":
                    batch.grants.add(value)
        return batch

    # running ---------------------------------------------------------------------
    async def run(self) -> None:
        self.project.ensure_layout()
        self._branch = await asyncio.to_thread(current_branch, self.project.root)
        await asyncio.to_thread(importlib.import_module, "watchfiles")
        await asyncio.to_thread(importlib.import_module, "anyio._backends._asyncio")  # what awatch loads on first use
        import watchfiles  # loaded just above, off the event loop

        from tui_agent.core.catalog.watching import WatchRecord

        # other processes' start-up catch-ups leave the hand edits this watcher settles to it (catalog/watching.py)
        record = WatchRecord.take(self.project.cache_dir) if self.on_tools is not None else None
        announcer = asyncio.create_task(self._announce())
        self.running = True
        try:
            async for changes in watchfiles.awatch(self.project.root, watch_filter=self._watch_filter,
                                                   debounce=self.debounce_ms, step=self.step_ms):
                await self._handle(self.sort(changes))
        finally:
            self.running = False
            if record is not None:
                record.release()
            announcer.cancel()
            for event in self._barriers.values():
                event.set()
            for probe in self._probe_dir.glob(f"{PROBE_PREFIX}-{os.getpid()}-*"):
                probe.unlink(missing_ok=True)

    async def _handle(self, batch: Batch) -> None:
        if batch.probes and not self.ready.is_set():
            self.ready.set()
            batch.probes.add(self._announce_probe_name())  # what `settle` calls made before now wait for
            self._files_on_disk(batch)  # what changed before the OS watch was live
        steps: list[tuple[str, Callable[[], Awaitable[object]]]] = []
        if batch.tools and self.on_tools is not None:
            steps.append(("tool files", lambda: self.on_tools(set(batch.tools))))  # type: ignore[misc]
        if batch.recipes and self.on_recipes is not None:
            steps.append(("recipe files", lambda: self.on_recipes(set(batch.recipes))))  # type: ignore[misc]
        for what, step in steps:
            await _handled(what, step)
        await self._publish(batch)
        for name in batch.probes:
            barrier = self._barriers.pop(name, None)
            if barrier is not None:
                barrier.set()

    def _files_on_disk(self, batch: Batch) -> None:
        """Add every tool and recipe file to the batch (the stores skip the ones they already know unchanged)."""
        for folder, suffix, names in ((self.project.tools_dir, ".py", batch.tools),
                                      (self.project.recipes_dir, ".toml", batch.recipes)):
            if folder.is_dir():
                names.update(path.stem for path in folder.glob(f"*{suffix}") if not path.name.startswith("."))

    async def _publish(self, batch: Batch) -> None:
        if batch.grants and self.on_grants is not None:
            await _handled("config files", _later(self.on_grants, sorted(batch.grants)))
        if batch.files:
            paths = sorted(batch.files)
            if self.on_files is not None:
                await _handled("project files", _later(self.on_files, paths))
            self._emit(FilesChanged(tuple(paths)))
        if batch.usage:
            self._emit(UsageChanged())
        if batch.head:
            branch = current_branch(self.project.root)
            if branch != self._branch:
                self._branch = branch
                self._emit(BranchChanged(branch))

    def _emit(self, event: FilesChanged | UsageChanged | BranchChanged) -> None:
        if self.changes is not None:
            self.changes.publish(event)

    async def _announce(self) -> None:
        """Write a probe until the watch reports it: then the OS watch is live."""
        probe = self._probe_dir / self._announce_probe_name()
        while not self.ready.is_set():
            try:
                projectfs.append(probe, b"probe\n")  # never through a link in .agent/
            except OSError as error:  # a read-only or full disk: no probe can prove the watch live, so after a
                log.info("the project watcher cannot write its probe (%s); taking the watch as live", error)
                await asyncio.sleep(1.0)  # moment it is taken as live (with the same catch-up as a probe's)
                if not self.ready.is_set():
                    await self._handle(Batch(probes={probe.name}))
                return
            await asyncio.sleep(0.05)
        probe.unlink(missing_ok=True)

    def _announce_probe_name(self) -> str:
        return f"{PROBE_PREFIX}-{os.getpid()}-ready"

    async def settle(self, timeout_s: float = 30.0, ready_timeout_s: float = 2.0) -> None:
        """Return once every file change made before this call has been handled (a probe written now has come
        back through the watch), or after `timeout_s`; at once when the watcher is not running. A watch that is not
        live yet gets `ready_timeout_s` (what changed before it went live is re-checked when it does)."""
        if not self.running:
            return
        if not self.ready.is_set():
            # The batch that proves the watch live re-reads every tool and recipe file after this call: once it
            # is handled, so is every change made before this call (no probe of our own needed).
            live = self._barriers.setdefault(self._announce_probe_name(), asyncio.Event())
            with contextlib.suppress(TimeoutError, asyncio.TimeoutError):
                await asyncio.wait_for(live.wait(), ready_timeout_s)
            return
        name = f"{PROBE_PREFIX}-{os.getpid()}-{next(self._probe_ids)}"
        barrier = self._barriers[name] = asyncio.Event()
        probe = self._probe_dir / name
        try:
            projectfs.append(probe, b"probe\n")  # never through a link in .agent/
            await asyncio.wait_for(barrier.wait(), timeout_s)
        except OSError as error:  # a read-only or full disk: no probe, so nothing to wait for
            log.info("the project watcher cannot write its probe: %s", error)
        except (TimeoutError, asyncio.TimeoutError):
            log.warning("the project watcher did not report a probe within %.0f s", timeout_s)
        finally:
            self._barriers.pop(name, None)
            probe.unlink(missing_ok=True)


async def _handled(what: str, step: Callable[[], Awaitable[object]]) -> None:
    """Run one handler of a batch; its failure is logged, the others still run."""
    try:
        await step()
    except asyncio.CancelledError:
        raise
    except Exception:  # edge: a handler's failure (any kind, it runs the stores' code) must not stop the watcher
        log.exception("handling changed %s failed", what)


def _later(call: OnFiles, paths: list[str]) -> Callable[[], Awaitable[object]]:
    async def step() -> object:
        return call(paths)
    return step


def _relative(path: Path, raw_path: str, root: Path) -> str | None:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        rel = Path(os.path.relpath(os.path.realpath(raw_path), root)).as_posix()
        return None if rel.startswith("../") else rel


def _classify_agent(parts: list[str]) -> tuple[str, str] | None:
    if len(parts) != 3 or parts[2].startswith("."):
        return ("usage", "") if len(parts) == 2 and parts[1] in STATE_FILES else None
    folder, file = parts[1], parts[2]
    if folder == "tools" and file.endswith(".py"):
        return ("tool", file[: -len(".py")])  # a bad name shows up as a broken tool
    if folder == "recipes" and file.endswith(".toml"):
        return ("recipe", file[: -len(".toml")])
    return None


def _git_dir_inside(root: Path) -> Path | None:
    """`<root>/.git` when it is the repository's folder (a worktree's `.git` file points elsewhere: not watched)."""
    git_dir = root / ".git"
    return git_dir if git_dir.is_dir() else None
