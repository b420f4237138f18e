"""Startup: validate and register the tools already in `.agent/tools/` (cached by content hash) and catch up git."""

from __future__ import annotations

import asyncio
import os
import secrets
import shutil
import time
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.catalog.drift import blob_sha
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.catalog.diskload import DiskLoad, register_known, save_hashes, sort_read, tool_relative
from tui_agent.core.catalog.filehashes import FileHashes, scan
from tui_agent.core.catalog.files import atomic_write_many, process_alive, read_bytes_or_none, temp_writer_pid, tool_name_of
from tui_agent.core.versioning.gitstore import CatalogGit
from tui_agent.core.catalog.inspector import INSPECTOR_VERSION
from tui_agent.core.catalog.models import ToolSpec
from tui_agent.core.catalog.pipeline import INSPECTOR_MODULE, Pipeline
from tui_agent.core.catalog.toolfile import check_tool_bytes, source_sha
from tui_agent.core.catalog.watching import live_watchers
from tui_agent.core.sandbox import ERROR_CANCELLED, RunResult, SandboxUnavailable, ToolBatch, ToolCall


BATCH_SIZE = 50
"""Tools per batched sandbox run at a cold open (each still in its own forked process)."""
BATCH_CONCURRENCY = 2
"""Batched runs at once: one per core, each in a worker of its own."""
SPLIT_AT_LEAST = 20
"""Tools per chunk worth a second worker: fewer ones are validated in one run."""


@dataclass
class LoadReport:
    """What a startup load did: tools served from the cache, validated afresh, broken, and caught up in git."""

    cached: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    """The cached ones registered without reading their file: its fingerprint was unchanged (catalog/filehashes.py)."""
    validated: list[str] = field(default_factory=list)
    broken: list[str] = field(default_factory=list)
    cached_broken: list[str] = field(default_factory=list)
    """The broken ones whose failure was known for these exact bytes (not run again)."""
    caught_up: list[str] = field(default_factory=list)
    git_message: str | None = None
    refused: dict[str, str] = field(default_factory=dict)
    """Catalog paths differing from HEAD that no commit may touch (unmerged, sparse, conflict markers) -> why."""
    hashes: FileHashes | None = None
    """The remembered hashes as the load left them (the watcher's first catch-up reads only the files changed since)."""
    left_to_watcher: dict[str, str] = field(default_factory=dict)
    """Tool -> "add", "update" or "remove": hand edits another live tuiagent process watches and commits once they
    settle (not committed here at start; a verb on the tool here commits it first)."""


def remove_stale_temp_files(tools_dir: Path, max_live_age_s: float = 60.0) -> None:
    """Delete temp files an interrupted atomic write left behind: their writer is dead (or unknown, or long gone)."""
    now = time.time()
    for temp in tools_dir.glob(".*.tmp"):
        pid = temp_writer_pid(temp)
        try:
            live = pid is not None and pid != os.getpid() and process_alive(pid)
            if not live or now - temp.stat().st_mtime >= max_live_age_s:
                temp.unlink()
        except FileNotFoundError:
            continue


def remove_stale_staging(staging: Path, max_age_s: float = 3600.0) -> list[str]:
    """Delete what killed runs left in `.agent/cache/staging/`: batch folders of dead processes, and single staged
    copies older than `max_age_s` (a validation takes seconds). Returns the names removed."""
    removed: list[str] = []
    try:
        items = list(staging.iterdir())
    except OSError:
        return removed
    now = time.time()
    for item in items:
        parts = item.name.split("-")
        try:
            if item.is_dir() and not item.is_symlink() and parts[0] == "batch" and len(parts) >= 3 and parts[1].isdigit():
                if int(parts[1]) != os.getpid() and not process_alive(int(parts[1])):
                    shutil.rmtree(item, ignore_errors=True)
                    removed.append(item.name)
            elif (item.is_file() or item.is_symlink()) and now - item.lstat().st_mtime > max_age_s:
                item.unlink()
                removed.append(item.name)
        except OSError:
            continue
    return removed


def head_tool_blobs(git: CatalogGit, tools_dir: Path) -> dict[str, str] | None:
    """Tool file name → blob id in HEAD (one `git ls-tree`); empty without a repository or commit (nothing is committed)."""
    return git.folder_blobs(Path(os.path.relpath(tools_dir, git.root)).as_posix())


async def load_existing(pipeline: Pipeline, git: CatalogGit) -> LoadReport:
    """Register every tool file on disk; a broken file keeps its HEAD version live when that one is good."""
    project, state = pipeline.project, pipeline.state
    report = LoadReport()
    head_blobs = head_tool_blobs(git, project.tools_dir) if project.tools_dir.is_dir() else None
    remove_stale_temp_files(project.tools_dir)
    await asyncio.to_thread(remove_stale_staging, project.cache_dir / "staging")
    load = DiskLoad(pipeline, head_blobs, state.all_cached_validations(INSPECTOR_VERSION), state.all_version_commits(),
                    FileHashes.load(project.root, project.cache_dir), scan(project.tools_dir),
                    scan(pipeline.runnable_dir) if not pipeline.read_only else {})
    on_disk = sorted(project.tools_dir.glob("*.py"))
    load.tools_rel = project.relative(project.tools_dir) if on_disk or head_blobs else ""
    for gone in sorted(set(head_blobs or {}) - {path.name for path in on_disk}):
        if gone.endswith(".py") and not gone.startswith("."):  # deleted while tuiagent was not running
            load.pending_commit[project.relative(project.tools_dir / gone)] = None
    for path in on_disk:
        name = tool_name_of(path)
        if name is not None and not register_known(load, name, path):
            sort_read(load, name, path)
    report.cached, report.unread, report.hashes = load.registered, load.unread, load.hashes
    await validate_and_register(load, git, report)
    async with pipeline.writer.hold():  # three processes starting at once make one catch-up commit, not three
        await catch_up_git(pipeline, git, load.pending_commit, report)
    if load.hashes.changed or len(load.hashes.entries) > len(on_disk) + len(load.copies):
        await asyncio.to_thread(save_hashes, load, on_disk)
    return report


async def validate_and_register(load: DiskLoad, git: CatalogGit, report: LoadReport) -> None:
    """Validate the fresh tools (batched), then register the good ones and keep the HEAD version of the broken ones."""
    pipeline, head_blobs = load.pipeline, load.head_blobs
    outcomes = await validate_batch(pipeline, [(name, data) for name, _, data in load.fresh])
    checked = [*load.fresh, *((name, path, data) for name, path, data, _ in load.known_failures)]
    outcomes += [error for *_, error in load.known_failures]
    report.cached_broken = sorted(name for name, *_ in load.known_failures)
    good: list[tuple[str, ToolSpec, bytes]] = []
    for (name, path, data), outcome in sorted(zip(checked, outcomes, strict=False), key=lambda item: item[0][0]):
        rel = tool_relative(pipeline.project, load.tools_rel, path)
        if isinstance(outcome, PipelineError):
            await keep_head_version(pipeline, git, name, rel, data, head_blobs)
            pipeline.registry.mark_broken(name, outcome, source_sha(data))
            report.broken.append(name)
            continue
        good.append((name, outcome, data))
        report.validated.append(name)
        if head_blobs is not None and head_blobs.get(path.name) != blob_sha(data):
            load.pending_commit[rel] = data
    pipeline.register_all(good)
    resolve_commits(pipeline, git, head_blobs, {name: data for name, _, data in good})


async def catch_up_git(pipeline: Pipeline, git: CatalogGit, pending_commit: dict[str, bytes | None], report: LoadReport) -> None:
    """Commit what differs from HEAD now (the caller holds the writer lock: another process may have just committed it)."""
    project, registry, state = pipeline.project, pipeline.registry, pipeline.state
    head_now = await asyncio.to_thread(head_tool_blobs, git, project.tools_dir) if pending_commit else {}
    pending_commit = {rel: data for rel, data in pending_commit.items()
                      if read_bytes_or_none(project.root / rel) == data
                      and (head_now or {}).get(Path(rel).name) != (None if data is None else blob_sha(data))}
    refused = await asyncio.to_thread(git.refusals, pending_commit) if pending_commit else {}
    pending_commit = {rel: data for rel, data in pending_commit.items() if rel not in refused}
    report.refused = refused
    # A change the journal already holds (a deferred prune, a create_tool killed before its commit) keeps its own
    # message: it is caught up below, not relabelled as changed while tuiagent was not running.
    journaled = {rel for rel, data in pending_commit.items()
                 if (entry := git.pending_change(rel)) is not None and entry.content == data}
    pending_commit = {rel: data for rel, data in pending_commit.items() if rel not in journaled}
    if pending_commit and (watchers := await asyncio.to_thread(live_watchers, project.cache_dir)):
        leave_to_watcher(pending_commit, head_now or {}, watchers, report)
        pending_commit = {}
    if pending_commit:
        names = sorted(Path(rel).stem for rel in pending_commit)
        message = f"tuiagent: catch up tool{'s' if len(names) > 1 else ''} {listing(names)} (changed while tuiagent was not running)"
        outcome = await pipeline.commit(pending_commit, message)
        report.caught_up = names
        report.git_message = outcome.message
        if outcome.sha:
            for rel, data in pending_commit.items():
                if data is None:
                    continue
                name = Path(rel).stem
                state.set_version_commit(name, source_sha(data), outcome.sha)
                registry.set_commit(name, outcome.sha)
    elif git.pending():
        outcome = await asyncio.to_thread(git.catch_up, git.journal_subject())
        report.git_message = "; ".join(filter(None, (report.git_message, outcome.message)))
        if outcome.sha:
            report.caught_up = sorted(Path(rel).stem for rel in journaled)


def leave_to_watcher(pending_commit: dict[str, bytes | None], head_blobs: dict[str, str], watchers: list[int],
                     report: LoadReport) -> None:
    """A tuiagent open on the project (the TUI, a headless run) watches these files: they are hand edits it commits
    once they settle, under the person's name. Committing them here would split the burst and say they changed
    while tuiagent was not running."""
    names = sorted(Path(rel).stem for rel in pending_commit)
    report.left_to_watcher = {Path(rel).stem: "remove" if data is None else "update" if Path(rel).name in head_blobs
                              else "add" for rel, data in pending_commit.items()}
    holders = ", ".join(str(pid) for pid in watchers)
    report.git_message = (f"not committing hand edit{'s' if len(names) > 1 else ''} of {listing(names)}: the tuiagent "
                          f"open on this project (process {holders}) commits {'them' if len(names) > 1 else 'it'} "
                          "once the edit settles")


def listing(names: list[str]) -> str:
    return ", ".join(names) if len(names) <= 5 else f"{', '.join(names[:5])} and {len(names) - 5} more"


async def validate_batch(pipeline: Pipeline, items: list[tuple[str, bytes]]) -> list[ToolSpec | PipelineError]:
    """Validate many tools at once (a cold open): staged together, then validated in chunks, each chunk one
    sandboxed run that forks a child per tool (its own process, limits and private folders; see
    `Sandbox.call_each`), then their runnable copies written with one sync."""
    outcomes: list[ToolSpec | PipelineError | None] = [None] * len(items)
    if len(even_chunks(list(range(len(items))), BATCH_SIZE, BATCH_CONCURRENCY)) > 1:
        pipeline.sandbox.prewarm(BATCH_CONCURRENCY)  # the workers boot while the tools are checked and staged
    inspected: list[int] = []
    for index, (name, data) in enumerate(items):
        try:
            check_tool_bytes(name, data)
            inspected.append(index)
        except PipelineError as error:  # static checks first, as in every validation
            outcomes[index] = error
    if not inspected:
        return [outcome for outcome in outcomes if outcome is not None]
    chunks = even_chunks(inspected, BATCH_SIZE, BATCH_CONCURRENCY)
    staging = pipeline.project.cache_dir / "staging" / f"batch-{os.getpid()}-{secrets.token_hex(4)}"
    if pipeline.read_only:  # nothing can change the files of a read-only project: inspect them where they are
        staged = [pipeline.project.tool_path(items[index][0]) for index in inspected]
    else:
        staged = await asyncio.to_thread(stage_all, staging, [items[index] for index in inspected])
    paths: dict[int, Path] = dict(zip(inspected, staged, strict=False))
    gate = asyncio.Semaphore(BATCH_CONCURRENCY)

    async def validate_chunk(indexes: list[int]) -> None:
        async with gate:
            runs = await inspect_chunk(pipeline, [(items[i][0], paths[i]) for i in indexes])
        with pipeline.state.deferred():  # the chunk's validation results: one transaction
            for index, run in zip(indexes, runs, strict=False):
                name, data = items[index]
                outcomes[index] = await finish_one(pipeline, name, data, paths[index], run)

    try:
        await asyncio.gather(*(validate_chunk(chunk) for chunk in chunks))
    finally:
        await asyncio.to_thread(shutil.rmtree, staging, True)
    done = [outcome for outcome in outcomes if outcome is not None]
    runnable = {pipeline.runnable_path(outcome.source_sha): data for (_name, data), outcome in zip(items, outcomes, strict=False)
                if isinstance(outcome, ToolSpec)}
    if not pipeline.read_only:
        await asyncio.to_thread(atomic_write_many, {path: data for path, data in runnable.items() if not path.exists()})
    return done


def even_chunks(indexes: list[int], most: int, concurrency: int) -> list[list[int]]:
    """`indexes` cut into chunks of at most `most`, as many as a multiple of `concurrency` and of even sizes, so the
    runs going at once finish together (no last chunk left running alone); a handful stays in one chunk."""
    if not indexes:
        return []
    count = -(-len(indexes) // most)
    if len(indexes) >= concurrency * SPLIT_AT_LEAST:
        count = -(-count // concurrency) * concurrency
    size, extra = divmod(len(indexes), count)
    chunks, start = [], 0
    for number in range(count):
        end = start + size + (1 if number < extra else 0)
        chunks.append(indexes[start:end])
        start = end
    return chunks


async def inspect_chunk(pipeline: Pipeline, chunk: list[tuple[str, Path]]) -> list[RunResult | None]:
    """The inspector's run for each tool of the chunk, in one sandboxed run; None for each when that run failed."""
    calls = [{"path": str(path), "name": name, "run_tests": True, "test_timeout_s": pipeline.test_timeout_s}
             for name, path in chunk]
    try:
        runs = await pipeline.sandbox.run(ToolBatch(tuple(
            ToolCall(INSPECTOR_MODULE, "inspect_tool_file", kwargs, label=f"inspect {name}")
            for kwargs, (name, _path) in zip(calls, chunk, strict=True))), pipeline.inspect_policy)
    except SandboxUnavailable:
        return [None] * len(chunk)
    if any(run.error_kind == ERROR_CANCELLED for run in runs):  # the batch was stopped: each tool is validated alone
        return [None] * len(chunk)
    return list(runs)


async def finish_one(pipeline: Pipeline, name: str, data: bytes, path: Path, run: RunResult | None) -> ToolSpec | PipelineError:
    """A tool's batched inspection as a ToolSpec or PipelineError; a run of its own when the batch could not say."""
    try:
        if run is None:
            return await pipeline.validate(name, data, staged=path)  # alone, as any other validation
        return await pipeline.finish_validation(name, data, run)
    except PipelineError as error:
        return error


def stage_all(folder: Path, items: list[tuple[str, bytes]]) -> list[Path]:
    """Plain copies for the inspector to import (scratch files: removed after the batch, never read again)."""
    paths = []
    for name, data in items:
        path = folder / f"{name}.py"
        projectfs.write_atomic(path, data, sync=False)
        paths.append(path)
    return paths


def last_commits(git: CatalogGit, tools_dir: Path) -> dict[str, str]:
    """Tool file name → the newest commit touching it, from one `git log` over `.agent/tools/`."""
    return git.newest_commits(Path(os.path.relpath(tools_dir, git.root)).as_posix())


def resolve_commits(pipeline: Pipeline, git: CatalogGit, head_blobs: dict[str, str] | None,
                    read: dict[str, bytes] | None = None) -> None:
    """Give every registered version that is committed unchanged in HEAD the commit that wrote it (drift baseline).

    `read`: tool name -> the bytes just registered for it (not read again); other tools are read from disk."""
    registry, state = pipeline.registry, pipeline.state
    unknown = [e for e in registry.entries() if e.spec is not None and e.commit is None and e.error is None]
    if not unknown or not head_blobs:
        return
    commits: dict[str, str] | None = None
    with state.deferred():
        for entry in unknown:
            assert entry.spec is not None  # `unknown` holds registered versions only
            file_name = f"{entry.name}.py"
            data = (read or {}).get(entry.name)
            if data is None:
                data = read_bytes_or_none(pipeline.project.tool_path(entry.name))
            if data is None or head_blobs.get(file_name) != blob_sha(data):
                continue
            if commits is None:
                commits = last_commits(git, pipeline.project.tools_dir)
            commit = commits.get(file_name)
            if commit:
                state.record_version(entry.name, entry.spec.source_sha, commit)
                state.set_version_commit(entry.name, entry.spec.source_sha, commit)
                registry.set_commit(entry.name, commit)


async def keep_head_version(pipeline: Pipeline, git: CatalogGit, name: str, rel: str, data: bytes,
                            head_blobs: dict[str, str] | None) -> None:
    """When the file on disk is broken, register its committed version (if good) as the last good one."""
    if not head_blobs or name + ".py" not in head_blobs or head_blobs[name + ".py"] == blob_sha(data):
        return
    try:
        committed = await asyncio.to_thread(git.show, rel, "HEAD")
    except ValueError:
        return
    if committed is None:
        return
    try:
        spec = await pipeline.validate(name, committed, use_cache=True)
    except PipelineError:
        return
    pipeline.register(name, spec, committed, await asyncio.to_thread(git.last_commit_for, rel))
