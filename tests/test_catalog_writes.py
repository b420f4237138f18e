"""WRITES = True: read by the inspector, carried by ToolSpec; tools and run_python see the project read-only unless allowed."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.gitrepo import user_state
from tests.catalog_support import opened_catalog, started_sandbox
from tui_agent.core.catalog.api import Catalog
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.catalog.inspector import INSPECTOR_VERSION


def writer_source(name: str, declaration: str = "") -> str:
    """A tool that overwrites the user's app.py (with `declaration`, e.g. "WRITES = True", at the top)."""
    return f'''"""Overwrite app.py."""
{declaration}


def {name}(text: str) -> str:
    """Replace the contents of app.py.

    Args:
        text: the new contents
    """
    with open("app.py", "w", encoding="utf-8") as handle:
        handle.write(text)
    return "written"


def test_{name}() -> None:
    assert {name}.__doc__
'''


WRITE_APP_SNIPPET = "open('app.py', 'w').write('from run_python')\n'done'"


@pytest.fixture
async def catalog(dirty_repo: Path) -> AsyncIterator[Catalog]:
    async with started_sandbox(dirty_repo, tier="bubblewrap") as sandbox:
        async with opened_catalog(dirty_repo, sandbox, inspect_timeout_s=10, test_timeout_s=5) as cat:
            yield cat


async def test_writes_is_read_into_the_spec_and_must_be_a_bool(catalog: Catalog) -> None:
    assert INSPECTOR_VERSION >= 4  # cached validations from before WRITES existed are not reused
    plain = (await catalog.save("plain_writer", writer_source("plain_writer"))).record
    declared = (await catalog.save("app_writer", writer_source("app_writer", "WRITES = True"))).record
    assert plain.spec is not None and plain.spec.writes is False
    assert declared.spec is not None and declared.spec.writes is True and declared.spec.network is False
    assert declared.to_dict()["spec"]["writes"] is True
    with pytest.raises(PipelineError) as info:
        await catalog.save("odd_writer", writer_source("odd_writer", 'WRITES = "yes"'))
    assert info.value.stage == "inspect" and "WRITES must be True or False" in info.value.message
    assert catalog.get("odd_writer") is None


async def test_a_tool_writes_only_when_it_declares_writes_and_the_caller_allows(dirty_repo: Path, catalog: Catalog) -> None:
    await catalog.save("plain_writer", writer_source("plain_writer"))
    await catalog.save("app_writer", writer_source("app_writer", "WRITES = True"))
    before = user_state(dirty_repo)

    for name, allow in (("plain_writer", False), ("plain_writer", True), ("app_writer", False)):
        run = await catalog.call_tool(name, {"text": "pwned"}, allow_writes=allow)
        assert not run.ok and "Read-only file system" in (run.error or ""), (name, allow, run)
        assert user_state(dirty_repo) == before

    run = await catalog.call_tool("app_writer", {"text": "approved\n"}, allow_writes=True)
    assert run.ok and run.value == "written"
    assert (dirty_repo / "app.py").read_text() == "approved\n"


async def test_run_python_is_read_only_unless_allowed(dirty_repo: Path, catalog: Catalog) -> None:
    before = user_state(dirty_repo)
    denied = await catalog.run_python(WRITE_APP_SNIPPET)
    assert not denied.ok and "Read-only file system" in (denied.error or "")
    assert user_state(dirty_repo) == before
    reading = await catalog.run_python("open('app.py').read()")
    assert reading.ok and reading.value == "print('hello, unstaged')\n"

    allowed = await catalog.run_python(WRITE_APP_SNIPPET, allow_writes=True)
    assert allowed.ok and allowed.value == "done"
    assert (dirty_repo / "app.py").read_text() == "from run_python"
