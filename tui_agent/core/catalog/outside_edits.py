"""OutsideEdits: tool files changed by a person, another process or git are revalidated, and committed once settled.

A good edit is registered at once (live on the next call) and committed `SETTLE_S` after the last save of a burst
(`settle.SettleTimers`); a broken one is marked broken while the last good version stays live; a deleted file is a
deletion unless HEAD no longer has it or it only left the sparse checkout."""

from __future__ import annotations

import asyncio

from tui_agent.core.catalog.filehashes import FileHashes, scan
from tui_agent.core.catalog.files import read_bytes_or_none
from tui_agent.core.catalog.pipeline import Pipeline
from tui_agent.core.catalog.settle import SETTLE_S, SettleTimers
from tui_agent.core.catalog.state import StateStore
from tui_agent.core.catalog.toolfile import source_sha
from tui_agent.core.errors import PROJECT_FAILURES
from tui_agent.core.project import Project
from tui_agent.core.versioning.gitstore import CatalogGit


class OutsideEdits:
    """The catalog's side of the watcher; the caller publishes the CatalogChanged."""

    def __init__(self, project: Project, pipeline: Pipeline, git: CatalogGit, state: StateStore,
                 settle_s: float = SETTLE_S) -> None:
        self.project = project
        self.pipeline = pipeline
        self.registry = pipeline.registry
        self.git = git
        self.state = state
        self.settle = SettleTimers(self._commit_settled, settle_s, None if pipeline.read_only else project.cache_dir)
        self.hashes: FileHashes | None = None
        """The hashes the catalog's load remembered (set once it has loaded): the first call (the watcher's catch-up
        of every tool file once its watch is live) reads only the files whose fingerprint changed since."""

    async def handle(self, names: set[str]) -> list[str]:
        """The names whose registration changed."""
        changed: list[str] = []
        hashes, self.hashes = self.hashes, None
        prints = scan(self.project.tools_dir) if hashes is not None else {}
        async with self.pipeline.lock:
            for name in sorted(names):
                path = self.project.tool_path(name)
                entry = self.registry.get(name)
                known = hashes.known(path, prints.get(path.name)) if hashes is not None else None
                if entry is not None and known is not None and known.source_sha == entry.disk_sha:
                    continue  # the bytes it was registered with: unchanged since the load (catalog/filehashes.py)
                data = read_bytes_or_none(path)
                if data is None:
                    self.settle.forget(name)
                    if entry is not None:
                        await self._removed(name)
                        changed.append(name)
                    continue
                if entry is not None and entry.disk_sha == source_sha(data):
                    continue
                verb = "update" if entry is not None else "add"
                accepted, _ = await self.pipeline.accept_disk(name, "", commit=False)
                if accepted is not None and accepted.error is None and accepted.commit is None:
                    self.settle.touch(name, verb)
                changed.append(name)
        return changed

    async def _commit_settled(self, name: str, verb: str) -> None:
        """Commit a hand edit that settled, if the file still holds the registered good version and HEAD lacks it."""
        path = self.project.tool_path(name)
        rel = self.project.relative(path)
        try:
            async with self.pipeline.lock, self.pipeline.writer.hold():  # read once no other process is writing it
                entry = self.registry.get(name)
                data = read_bytes_or_none(path)
                if entry is None or entry.spec is None or entry.error is not None or data is None \
                        or source_sha(data) != entry.spec.source_sha:
                    return  # broken or changed again since: a later event decides
                if await asyncio.to_thread(self.pipeline.committed, rel) == data and not self.pipeline.pending(rel):
                    commit = await asyncio.to_thread(self.git.last_commit_for, rel)  # another process committed it
                else:
                    message = f"tuiagent: {verb} tool {name} (edited outside tuiagent)"
                    commit = (await self.pipeline.commit({rel: data}, message)).sha
                if commit:
                    self.state.record_version(name, entry.spec.source_sha, commit)
                    self.state.set_version_commit(name, entry.spec.source_sha, commit)
                    self.registry.set_commit(name, commit)
        except PROJECT_FAILURES as error:  # a timer's task: the edit stays on disk and the next start commits it
            self.pipeline.last_commit_note = f"committing the hand edit of {name} failed: {error}"

    async def _removed(self, name: str) -> None:
        """The file is gone: commit the deletion, unless HEAD has it deleted already (another process pruned it)."""
        rel = self.project.relative(self.project.tool_path(name))
        async with self.pipeline.writer.hold():
            if read_bytes_or_none(self.project.tool_path(name)) is not None:
                return  # back already: the event for its return handles it
            in_head = await asyncio.to_thread(self.pipeline.committed, rel) is not None
            if not in_head and not self.pipeline.pending(rel):
                self.registry.unregister(name)
                return
            if await asyncio.to_thread(self.git.refusals, {rel: None}):  # left out of a sparse checkout: no deletion
                self.registry.unregister(name)
                return
            await self.pipeline.remove_locked(name, f"tuiagent: remove tool {name} (file deleted outside tuiagent)")
