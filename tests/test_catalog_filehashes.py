"""A warm start reads no tool file whose stat is unchanged (catalog/filehashes.py), and never takes a changed file,
or a hostile hashes file, for what it remembered."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.catalog_support import opened_catalog, started_sandbox, tool_source
from tests.gitrepo import git
from tui_agent.core.catalog import filehashes, outside_edits
from tui_agent.core.catalog.filehashes import CACHE_NAME
from tui_agent.core.catalog.toolfile import source_sha
from tui_agent.core.project import Project

NAMES = ("double", "triple")


@pytest.fixture(autouse=True)
def settled_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Files written by the test are remembered at once (a person's have not changed for seconds)."""
    monkeypatch.setattr(filehashes, "SETTLED_NS", 0)


def committed_tools(repo: Path) -> Project:
    project = Project.at(repo)
    project.ensure_layout()
    for name in NAMES:
        project.tool_path(name).write_text(tool_source(name))
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "tools")
    return project


async def test_a_warm_open_registers_unchanged_tools_without_reading_them(repo: Path) -> None:
    committed_tools(repo)
    async with started_sandbox(repo) as sandbox:
        async with opened_catalog(repo, sandbox) as cold:
            assert sorted(cold.load_report.validated) == list(NAMES) and cold.load_report.unread == []
        async with opened_catalog(repo, sandbox) as first_warm:  # reads them once more: the copies were just written
            assert sorted(first_warm.load_report.cached) == list(NAMES)
        async with opened_catalog(repo, sandbox) as warm:
            assert sorted(warm.load_report.unread) == list(NAMES) and warm.load_report.validated == []
            assert (await warm.call_tool("double", {"x": 4})).value == 8


async def test_an_edit_keeping_size_and_mtime_is_read(repo: Path) -> None:
    """The ctime (which nothing unprivileged sets back) tells an edit that kept the size and put the mtime back."""
    project = committed_tools(repo)
    path = project.tool_path("double")
    async with started_sandbox(repo) as sandbox:
        for _ in range(3):
            async with opened_catalog(repo, sandbox) as catalog:
                pass
        assert "double" in catalog.load_report.unread
        before = path.stat()
        edited = tool_source("double", body="return 3 * x")
        assert len(edited) == before.st_size
        path.write_text(edited)
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
        async with opened_catalog(repo, sandbox) as catalog:
            assert "double" not in catalog.load_report.unread
            entry = catalog.registry.get("double")
            assert entry is not None and entry.spec is not None and entry.spec.source_sha == source_sha(edited.encode())
            assert (await catalog.call_tool("double", {"x": 4})).value == 12


async def test_a_replaced_runnable_copy_is_not_taken_as_intact(repo: Path) -> None:
    project = committed_tools(repo)
    async with started_sandbox(repo) as sandbox:
        for _ in range(3):
            async with opened_catalog(repo, sandbox) as catalog:
                entry = catalog.registry.get("double")
        assert entry is not None and entry.runnable is not None and entry.spec is not None
        copy, original = entry.runnable, entry.runnable.read_bytes()
        info = copy.stat()
        forged = original.replace(b"return 2 * x", b"return 9 * x")
        copy.write_bytes(forged)
        os.utime(copy, ns=(info.st_atime_ns, info.st_mtime_ns))
        async with opened_catalog(repo, sandbox) as catalog:
            assert "double" not in catalog.load_report.unread
            assert copy.read_bytes() == original  # rewritten from the tool file at load
            assert (await catalog.call_tool("double", {"x": 4})).value == 8
    assert project.tool_path("double").read_bytes() == original


async def test_the_watchers_first_catch_up_reads_only_what_changed_since_the_load(repo: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Once its watch is live the watcher hands every tool file to the catalog (what changed before it was live): the
    ones whose fingerprint is the one the load remembered are not read again; one edited since is."""
    project = committed_tools(repo)
    read: list[str] = []
    real_read = outside_edits.read_bytes_or_none
    monkeypatch.setattr(outside_edits, "read_bytes_or_none", lambda path: read.append(path.name) or real_read(path))
    async with started_sandbox(repo) as sandbox:
        for _ in range(3):  # opened and closed until the load remembers every file's hashes
            async with opened_catalog(repo, sandbox) as catalog:
                assert catalog.registry.get("double") is not None
        async with opened_catalog(repo, sandbox) as catalog:
            assert sorted(catalog.load_report.unread) == list(NAMES)
            edited = tool_source("triple", body="return 3 * x")
            project.tool_path("triple").write_text(edited)
            assert await catalog.outside_edit(set(NAMES)) == ["triple"]
            assert read == ["triple.py"]
            entry = catalog.registry.get("triple")
            assert entry is not None and entry.spec is not None and entry.spec.source_sha == source_sha(edited.encode())
            read.clear()
            assert await catalog.outside_edit(set(NAMES)) == [] and sorted(read) == ["double.py", "triple.py"]  # later events: read


@pytest.mark.parametrize("content", [b"not json", b'{"format": 1, "files": {"../x": [1, 2, 3, 4, 5, "a", "b"]}}',
                                     b'{"format": 1, "files": []}', b"[1, 2]"])
async def test_a_malformed_hashes_file_is_ignored(repo: Path, content: bytes) -> None:
    project = committed_tools(repo)
    async with started_sandbox(repo) as sandbox:
        async with opened_catalog(repo, sandbox):
            pass
        (project.cache_dir / CACHE_NAME).write_bytes(content)
        async with opened_catalog(repo, sandbox) as catalog:
            assert sorted(catalog.load_report.cached) == list(NAMES) and catalog.load_report.unread == []
            assert (await catalog.call_tool("triple", {"x": 1})).value == 2


async def test_an_entry_made_for_other_bytes_is_not_used(repo: Path) -> None:
    """A hashes file brought from elsewhere (another clone, a hostile writer) names other fingerprints: each file
    whose own is not there is read."""
    project = committed_tools(repo)
    async with started_sandbox(repo) as sandbox:
        for _ in range(3):
            async with opened_catalog(repo, sandbox):
                pass
        cache = project.cache_dir / CACHE_NAME
        document = json.loads(cache.read_text())
        key = project.relative(project.tool_path("double"))
        document["files"][key][1] += 1  # another inode
        cache.write_text(json.dumps(document))
        async with opened_catalog(repo, sandbox) as catalog:
            assert catalog.load_report.unread == ["triple"] and sorted(catalog.load_report.cached) == list(NAMES)


async def test_a_linked_hashes_file_is_neither_read_nor_replaced(repo: Path, tmp_path: Path) -> None:
    project = committed_tools(repo)
    outside = tmp_path / "outside.json"
    outside.write_text("{}")
    async with started_sandbox(repo) as sandbox:
        async with opened_catalog(repo, sandbox):
            pass
        cache = project.cache_dir / CACHE_NAME
        cache.unlink(missing_ok=True)
        cache.symlink_to(outside)
        for _ in range(2):
            async with opened_catalog(repo, sandbox) as catalog:
                assert catalog.load_report.unread == [] and sorted(catalog.load_report.cached) == list(NAMES)
    assert cache.is_symlink() and outside.read_text() == "{}"
