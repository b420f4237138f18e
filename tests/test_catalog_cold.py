"""A cold open (no state.db) validates the tools in batches, each tool still in its own sandboxed process."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.gitrepo import git
from tests.catalog_support import tool_source
from tui_agent.core.catalog.api import Catalog
from tui_agent.core.catalog.startup import BATCH_CONCURRENCY, BATCH_SIZE, even_chunks
from tui_agent.core.project import Project
from tui_agent.core.auditlog import AuditLog
from tui_agent.core.sandbox import Sandbox

TAG = f"cold-daemon-{os.getpid()}-{time.time_ns()}"

# Sorted by name, each tool runs after the one before it in the same batch.
A_PLANTS = tool_source("a_plants", extra=(
    "import os, subprocess, sys\n"
    "open('/tmp/planted', 'w').write('x')\n"
    "sys.modules['planted_module'] = sys\n"
    f"subprocess.Popen(['/bin/sh', '-c', 'sleep 300; : {TAG}'], start_new_session=True,\n"
    "                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)\n"))
B_CHECKS = tool_source("b_checks") + (
    "\n\ndef test_nothing_from_the_tool_before() -> None:\n"
    "    import os, sys\n"
    "    assert not os.path.exists('/tmp/planted')\n"
    "    assert 'planted_module' not in sys.modules\n")
C_EXITS = tool_source("c_exits", extra="import os\nos._exit(3)\n")
D_FAILS = tool_source("d_fails") + "\n\ndef test_fails() -> None:\n    assert d_fails(2) == 5\n"


def leftover_daemons() -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and TAG.encode() in (entry / "cmdline").read_bytes():
                found.append(entry.name)
        except OSError:
            pass
    return found


async def test_a_cold_open_validates_each_tool_in_isolation_and_the_cache_guards_the_warm_start(repo: Path) -> None:
    project = Project.at(repo)
    project.ensure_layout()
    sources = {"a_plants": A_PLANTS, "b_checks": B_CHECKS, "c_exits": C_EXITS, "d_fails": D_FAILS}
    sources.update({f"tool_{i:03d}": tool_source(f"tool_{i:03d}") for i in range(BATCH_SIZE + 5)})  # two batches
    for name, source in sources.items():
        project.tool_path(name).write_text(source)
    git(repo, "add", ".agent/tools")
    git(repo, "commit", "-qm", "tools")
    sandbox = await Sandbox.start(project)
    try:
        cold = await Catalog.open(project, sandbox)
        report = cold.load_report
        assert sorted(report.broken) == ["c_exits", "d_fails"], report.broken
        assert len(report.validated) == len(sources) - 2 and "b_checks" in report.validated
        assert "exited" in (cold.get("c_exits").error.message or "") or "status" in cold.get("c_exits").error.message
        assert cold.get("d_fails").error.stage == "tests"
        for name in report.validated:  # the last good copy each tool call and run_python import
            entry = cold.registry.get(name)
            assert entry is not None and entry.runnable is not None and entry.runnable.read_bytes() == sources[name].encode()
        assert leftover_daemons() == []
        assert not list((project.cache_dir / "staging").glob("batch-*"))
        labels = [entry["label"] for entry in AuditLog(project.runs_dir).entries()]
        assert all(labels.count(f"inspect {name}") >= 1 for name in sources)  # one audit line per tool
        await cold.aclose()

        inspected = len(labels)
        warm = await Catalog.open(project, sandbox)
        assert sorted(warm.load_report.cached) == sorted(report.validated) and warm.load_report.validated == []
        assert warm.load_report.cached_broken == ["d_fails"] and sorted(warm.load_report.broken) == ["c_exits", "d_fails"]
        # only c_exits runs again: a process that died without an answer is never cached as the tool's verdict
        assert [entry["label"] for entry in AuditLog(project.runs_dir).entries()][inspected:] == ["inspect c_exits"]
        await warm.aclose()
    finally:
        await sandbox.aclose()


def test_chunks_are_even_a_multiple_of_the_concurrency_and_a_handful_stays_whole() -> None:
    for count in (0, 1, 3, 39, 40, 101, 300, 1001):
        chunks = even_chunks(list(range(count)), BATCH_SIZE, BATCH_CONCURRENCY)
        assert [index for chunk in chunks for index in chunk] == list(range(count))
        assert all(len(chunk) <= BATCH_SIZE for chunk in chunks)
        if chunks:
            assert max(map(len, chunks)) - min(map(len, chunks)) <= 1
    assert len(even_chunks(list(range(39)), BATCH_SIZE, BATCH_CONCURRENCY)) == 1  # one run: no second server to boot
    assert len(even_chunks(list(range(101)), BATCH_SIZE, BATCH_CONCURRENCY)) == 4  # not 50 + 50 + 1 left alone
