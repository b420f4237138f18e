"""The web_fetch built-in: a URL to readable text, fetched on the host under the sandbox's network grant, each new
host approved by the person (a `web_fetch(domain:HOST)` rule remembers it)."""

from __future__ import annotations

import asyncio
import http.client
import urllib.parse

from tui_agent.core.agent.permission_rules import DOMAIN_PREFIX
from tui_agent.core.agent.permissions import ApprovalRequest
from tui_agent.core.agent.toolbase import BuiltinTool, ToolContext, ToolFailure, ToolOutput, require_str, schema, truncate
from tui_agent.core.hostnames import describe_grant, name_granted
from tui_agent.core.network.policy import NetPolicy, Refused, fetch
from tui_agent.core.sandbox import NetworkGrant
from tui_agent.core.web.pagetext import NotText, page_text
from tui_agent.core.content import JsonObject

FETCH_BYTES = 5_000_000
FETCH_TIMEOUT_S = 30.0
PAGE_CHARS = 40_000
"""How much of a page's text the model reads; a longer page is cut with a note saying so."""


def _host_of(url: str) -> tuple[str, int]:
    """The host name (lower case) and port of an http(s) URL; ToolFailure for anything else."""
    try:
        parts = urllib.parse.urlsplit(url.strip())
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise ToolFailure(f"{url!r} is not a valid URL ({exc})") from exc
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ToolFailure(f"{url!r} is not an http:// or https:// URL")
    return parts.hostname.lower().rstrip("."), port


def _grant(ctx: ToolContext, host: str) -> NetworkGrant:
    """Only the requested host (a redirect elsewhere is refused, so it gets its own approval), when the sandbox's
    grant covers it."""
    sandbox_grant: NetworkGrant = ctx.sandbox.network_grant() if ctx.sandbox is not None else True
    if not name_granted(host, sandbox_grant):
        raise ToolFailure(f"refused: {host} is not in the network grant ({describe_grant(sandbox_grant)}; "
                          "`[sandbox] network` in .agent/config.toml lists the names agent code may reach)")
    return (host,)


async def web_fetch(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    url = require_str(args, "url").strip()
    host, port = _host_of(url)
    grant = _grant(ctx, host)
    try:  # a refused destination (loopback, private, this machine) is refused before anyone is asked
        await asyncio.to_thread(NetPolicy(grant).resolve, host, port)
    except Refused as refused:
        raise ToolFailure(f"refused: {refused}") from None
    request = ApprovalRequest("web", "web_fetch", f"fetch {url} (the URL is sent to {host})", url,
                              subject=DOMAIN_PREFIX + host, read_only_safe=True)
    if await ctx.require_approval(request):  # the person said yes to this host: its next pages are not asked about
        ctx.permissions.add_rule(f"web_fetch({DOMAIN_PREFIX}{host})")
    try:
        got = await fetch(url, grant, max_bytes=FETCH_BYTES, timeout_s=FETCH_TIMEOUT_S)
    except Refused as refused:
        raise ToolFailure(f"refused: {refused} (a redirect to another host needs its own web_fetch call, "
                          "which the user approves)") from None
    except (OSError, ValueError, http.client.HTTPException) as exc:
        raise ToolFailure(f"could not fetch {url}: {exc or type(exc).__name__}") from None
    try:
        text = await asyncio.to_thread(page_text, got.body, got.content_type)  # a big page parses off the loop
    except NotText as exc:
        raise ToolFailure(f"{got.url}: {exc}") from None
    head = f"{got.url} (HTTP {got.status}, {got.content_type or 'no content type'})"
    if got.truncated:
        head += f"\n[only the first {FETCH_BYTES} bytes of the response were read]"
    body, cut = truncate(text or "(an empty page)", PAGE_CHARS)
    if cut:
        head += f"\n[the page's text is longer than {PAGE_CHARS} characters: the middle was cut]"
    return ToolOutput(f"{head}\n\n{body}", is_error=got.status >= 400, truncated=cut or got.truncated)


WEB_FETCH = BuiltinTool(
    "web_fetch",
    "Fetch a public web page (http or https URL) and read it as text: HTML becomes markdown (headings, links, lists "
    "and code kept; scripts and styles dropped); plain text and JSON come as they are; images and other binary "
    "content are refused. The user approves each new host; this machine, its LAN and private addresses are never "
    "reached. A redirect to another host is not followed: fetch the URL it names. Long pages are cut, with a note.",
    schema({"url": {"type": "string", "description": "the http:// or https:// URL to fetch"}}, ["url"]),
    web_fetch,
)
