"""Run by tests/test_web_fetch.py under `unshare -rnm`: the fake internet of tests/net_scenario.py (its own network
namespace, names in a private /etc/hosts, a listener on this namespace's loopback), then `web_fetch` calls through
real Permissions whose approval callback records what the person was asked; prints as JSON what each call returned,
what was asked, what the internet host logged and what the loopback listener heard."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.net_scenario import TEST_PUBLIC_NETS_ENV, Recorder, start_internet
from tui_agent.core.agent.permissions import ApprovalAnswer, ApprovalRequest, Permissions
from tui_agent.core.agent.toolbase import ToolContext, ToolFailure
from tui_agent.core.agent.web_tools import WEB_FETCH
from tui_agent.core.project import Project

PAGE = """<!doctype html><html><head><title>The Page</title><style>body { color: red }</style>
<script>var secret = "script text";</script></head><body>
<h2>Install</h2><p>Read <a href="https://docs.example.org/x">the docs</a> first.</p>
<ul><li>one</li><li>two</li></ul><pre><code>pip install thing
</code></pre><noscript>enable javascript</noscript></body></html>"""


def fill_docroot(docroot: Path) -> None:
    (docroot / "page.html").write_text(PAGE)
    (docroot / "image.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 64)
    (docroot / "long.txt").write_text("".join(f"line {n}\n" for n in range(20_000)))


async def calls(work: Path, loop: Recorder) -> dict[str, Any]:
    project_dir = work / "project"
    subprocess.run(["git", "init", "-q", str(project_dir)], check=True)
    project = Project.at(project_dir)
    asked: list[str] = []
    answers = {"files.example.org": True, "a.cdn.example.org": False}

    async def approve(request: ApprovalRequest) -> bool | ApprovalAnswer:
        asked.append(f"{request.kind} {request.subject} {request.summary}")
        return answers.get((request.subject or "").removeprefix("domain:"), False)

    async def one(permissions: Permissions, url: str) -> str:
        ctx = ToolContext(project=project, permissions=permissions, call_id="c", tool_name="web_fetch")
        try:
            out = await WEB_FETCH.handler(ctx, {"url": url})
        except ToolFailure as failure:
            return f"failure: {failure}"
        return f"{'error' if not isinstance(out, str) and out.is_error else 'ok'}: " + \
            (out if isinstance(out, str) else out.text + (" [truncated]" if out.truncated else ""))

    ask = Permissions("ask", approve)
    results: dict[str, Any] = {}
    for key, url in (("page", "https://files.example.org/page.html"), ("again", "http://files.example.org/hello.txt"),
                     ("image", "http://files.example.org/image.png"), ("long", "http://files.example.org/long.txt"),
                     ("missing", "http://files.example.org/missing-page"),
                     ("denied", "http://a.cdn.example.org/denied-page"),
                     ("loopback", f"http://127.0.0.1:{loop.port}/wf-loopback"),
                     ("localhost", f"http://localhost:{loop.port}/wf-localhost"),
                     ("sneaky", f"http://sneaky.example.org:{loop.port}/wf-sneaky"),
                     ("lan", "http://lan.example.org/wf-lan"),
                     ("redirect", "http://files.example.org/redirect?to=http://other.example.net/wf-redirected"),
                     ("ftp", "ftp://files.example.org/x")):
        results[key] = await one(ask, url)
    results["asked"] = list(asked)
    asked.clear()
    results["read_only"] = await one(Permissions("read-only", approve), "http://files.example.org/hello.txt")
    results["auto"] = await one(Permissions("auto", approve), "http://files.example.org/hello.txt")
    ruled = Permissions("ask", approve, allowed_tools=["web_fetch(domain:*.cdn.example.org)"])
    results["ruled"] = await one(ruled, "http://a.cdn.example.org/hello.txt")
    results["asked_modes"] = list(asked)
    results["session_rules"] = [text for text, _source in ask.rules()]
    return results


def main() -> None:
    work = Path(sys.argv[1])
    os.environ[TEST_PUBLIC_NETS_ENV] = "198.18.0.0/15"
    os.environ["SSL_CERT_FILE"] = str(work / "cert.pem")  # the fake host's self-signed certificate, for https
    server = start_internet(work)
    try:
        fill_docroot(work / "docroot")
        loop = Recorder("127.0.0.1")
        results = asyncio.run(calls(work, loop))
        time.sleep(0.2)
        log = work / "internet.log"
        results.update(loopback_heard=loop.heard, internet_log=log.read_text().splitlines() if log.exists() else [])
        print(json.dumps(results))
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
