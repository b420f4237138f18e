"""A start-up load's pass over the tools folder: each file registered from what is known of it, or queued for validation."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tui_agent.core import projectfs
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.catalog.filehashes import FileHashes, Fingerprint, hashes_of, read_with_fingerprint
from tui_agent.core.catalog.models import ToolSpec
from tui_agent.core.catalog.pipeline import Pipeline
from tui_agent.core.project import Project


def tool_relative(project: Project, tools_rel: str, path: Path) -> str:
    """The path git names a file listed in the tools folder by (`tools_rel`, resolved once); a symbolic link is
    named as itself (never followed: projectfs refuses it as a tool)."""
    return f"{tools_rel}/{path.name}"


@dataclass
class DiskLoad:
    """One start-up load's view of the tools folder: what state.db and the remembered hashes know, and what it sorted
    the files on disk into."""

    pipeline: Pipeline
    head_blobs: dict[str, str] | None
    cached: dict[str, dict[str, Any]]
    commits: dict[tuple[str, str], str | None]
    hashes: FileHashes
    prints: dict[str, Fingerprint]
    """Tool file name -> fingerprint (regular files only)."""
    copies: dict[str, Fingerprint]
    """Runnable copy name (`<sha>.py`) -> fingerprint."""
    tools_rel: str = ""
    fresh: list[tuple[str, Path, bytes]] = field(default_factory=list)
    known_failures: list[tuple[str, Path, bytes, PipelineError]] = field(default_factory=list)
    pending_commit: dict[str, bytes | None] = field(default_factory=dict)
    registered: list[str] = field(default_factory=list)
    """The tools registered from their cached validation."""
    unread: list[str] = field(default_factory=list)
    """Those of them registered from their remembered hashes, their file not read."""


def register_known(load: DiskLoad, name: str, path: Path) -> bool:
    """Register a tool without reading it when its file and its runnable copy still have the fingerprints their
    hashes were remembered with, its validation is cached and it is committed as it is; False otherwise (the caller
    reads it)."""
    pipeline = load.pipeline
    known = load.hashes.known(path, load.prints.get(path.name))
    if known is None or pipeline.read_only:
        return False
    result = load.cached.get(known.source_sha)
    if result is None or not result.get("ok") or result["schema"]["name"] != name:
        return False
    if load.head_blobs is not None and load.head_blobs.get(path.name) != known.blob_sha:
        return False  # not committed as it is: read for the catch-up commit
    runnable = pipeline.runnable_path(known.source_sha)
    if not load.hashes.intact(runnable, known.source_sha, load.copies.get(runnable.name)):
        return False
    spec = ToolSpec.from_inspection(result, known.source_sha)
    pipeline.registry.register(name, spec, runnable, load.commits.get((name, known.source_sha)))
    load.registered.append(name)
    load.unread.append(name)
    return True


def sort_read(load: DiskLoad, name: str, path: Path) -> None:
    """Read a tool file: register it from its cached validation, or queue it for validation (fresh, or a failure
    known for these bytes)."""
    pipeline = load.pipeline
    try:
        data, print_ = read_with_fingerprint(path)
    except projectfs.LinkRefused as refused:  # broken, saying why; never read through
        load.known_failures.append((name, path, b"", PipelineError("read", str(refused))))
        return
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return
    hashes = hashes_of(data)
    load.hashes.remember(path, print_, hashes)
    result = load.cached.get(hashes.source_sha)
    if result is not None and result.get("ok") and result["schema"]["name"] == name:
        spec = ToolSpec.from_inspection(result, hashes.source_sha)
        runnable = pipeline.runnable_path(hashes.source_sha)
        if pipeline.read_only or not load.hashes.intact(runnable, hashes.source_sha, load.copies.get(runnable.name)):
            runnable = pipeline.keep_runnable(data, name)
        pipeline.registry.register(name, spec, runnable, load.commits.get((name, hashes.source_sha)))
        load.registered.append(name)
        if load.head_blobs is not None and load.head_blobs.get(path.name) != hashes.blob_sha:
            load.pending_commit[tool_relative(pipeline.project, load.tools_rel, path)] = data
    elif result is not None and pipeline.cached_failure_applies(result, name):
        load.known_failures.append((name, path, data, PipelineError.from_dict(result["error"])))
    else:
        load.fresh.append((name, path, data))


def save_hashes(load: DiskLoad, on_disk: list[Path]) -> None:
    """Keep the remembered hashes of the tool files on disk and of the registered versions' copies; write them back."""
    pipeline = load.pipeline
    root = pipeline.project.root
    keep = {path.relative_to(root).as_posix() for path in on_disk}
    keep |= {pipeline.runnable_path(entry.spec.source_sha).relative_to(root).as_posix()
             for entry in pipeline.registry.entries() if entry.spec is not None}
    load.hashes.keep_only(keep)
    load.hashes.save(pipeline.project.cache_dir)
