"""Issue 33: a tool declares the host names it reaches (`NETWORK = ["files.example.org"]`); its calls reach those
names only (through the sandbox's proxy), the approval names them, and a malformed NETWORK is refused at save."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.agent_helpers import agent_runtime, run_turn
from tests.catalog_support import opened_catalog, started_sandbox
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.core.agent.permissions import ApprovalRequest
from tui_agent.core.catalog.api import Catalog
from tui_agent.core.catalog.errors import PipelineError

FETCHER = '''"""Ask the proxy for a page."""
import urllib.error
import urllib.request

NETWORK = {network}


def fetch_page(url: str) -> str:
    """Fetch a page and say what happened.

    Args:
        url: the address
    """
    try:
        return str(urllib.request.urlopen(url, timeout=10).status)
    except urllib.error.HTTPError as error:
        return f"{{error.code}} {{error.read().decode().strip()}}"
'''


@pytest.fixture
async def catalog(repo: Path) -> AsyncIterator[Catalog]:
    async with started_sandbox(repo, tier="bubblewrap") as sandbox:
        async with opened_catalog(repo, sandbox, inspect_timeout_s=10, test_timeout_s=5) as cat:
            yield cat


async def test_a_tool_reaches_only_the_names_it_declares(catalog: Catalog) -> None:
    record = (await catalog.save("fetch_page", FETCHER.format(network='["files.example.org", "*.Example.COM."]'))).record
    assert record.spec is not None and record.spec.network == ("files.example.org", "*.example.com")
    run = await catalog.call_tool("fetch_page", {"url": "http://other.example.net/"}, allow_network=True)
    assert run.ok and run.value == ("403 other.example.net is not in the network grant (only files.example.org, "
                                    "*.example.com)"), run
    assert "tuiagent network proxy refused: other.example.net" in run.stderr


async def test_a_malformed_network_declaration_is_refused_at_save(catalog: Catalog) -> None:
    for bad in ('"yes"', '["not a host"]', '[3]', '["http://files.example.org"]'):
        with pytest.raises(PipelineError) as info:
            await catalog.save("fetch_page", FETCHER.format(network=bad))
        assert info.value.stage == "inspect" and "NETWORK must be True, False or a list of host names" in \
            info.value.message, (bad, info.value.message)
    assert catalog.get("fetch_page") is None


async def test_the_approval_names_what_the_tool_reaches(repo: Path) -> None:
    asked: list[ApprovalRequest] = []

    async def refuse(request: ApprovalRequest) -> bool:
        asked.append(request)
        return False

    with FakeMessagesAPI() as api:
        api.enqueue(reply(tool_use("create_tool", {"name": "fetch_page",
                                                    "source": FETCHER.format(network='["files.example.org"]')})),
                    reply(tool_use("fetch_page", {"url": "http://files.example.org/"})), reply(text("done")))
        async with agent_runtime(repo, api, approve=refuse) as runtime:
            await run_turn(runtime, "fetch it")
    assert [request.kind for request in asked] == ["network"]
    assert asked[0].summary == "fetch_page uses the network (only files.example.org)"
