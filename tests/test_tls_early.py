"""The model client's TLS context is made on its own thread while the SDK imports, and is the one the SDK's HTTP
client would have made: the same trusted certificates, the same client defaults, the same error for a bad bundle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("httpx2")

REPORT = """
import asyncio, json, threading
from tui_agent.core.agent import tls_early
from tui_agent.core.agent.model import ModelClient, sdk

made_on = []
real_make = tls_early._make
tls_early._make = lambda future: (made_on.append(threading.current_thread().name), real_make(future))[1]

async def main():
    ours = ModelClient(api_key="k", base_url="http://127.0.0.1:9", timeout_s=600.0)._client._client
    theirs = sdk().AsyncAnthropic(api_key="k", base_url="http://127.0.0.1:9", max_retries=0, timeout=600.0)._client
    pools = [client._transport._pool for client in (ours, theirs)]
    print(json.dumps({
        "made_on": made_on,
        "ours_is_made": pools[0]._ssl_context is tls_early._made[0].result(),
        "certificates": [pool._ssl_context.cert_store_stats() for pool in pools],
        "verify": [[pool._ssl_context.verify_mode, pool._ssl_context.check_hostname] for pool in pools],
        "defaults": [[str(client.timeout), client.follow_redirects, pool._max_connections, pool._max_keepalive_connections]
                     for client, pool in zip((ours, theirs), pools)],
    }))

asyncio.run(main())
"""


def run(script: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **env})


def test_the_client_uses_the_context_made_alongside_the_import_and_trusts_what_the_sdk_would() -> None:
    done = run(REPORT)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["made_on"] == ["tls-context"] and report["ours_is_made"]
    ours, theirs = report["certificates"]
    assert ours == theirs and ours["x509_ca"] > 0
    assert report["verify"][0] == report["verify"][1] == [2, True]  # ssl.CERT_REQUIRED, host names checked
    assert report["defaults"][0] == report["defaults"][1]


def test_a_missing_ca_bundle_fails_where_the_client_is_made_as_the_sdk_would(tmp_path: Path) -> None:
    script = ("from tui_agent.core.agent.model import ModelClient\n"
              "try:\n    ModelClient(api_key='k', base_url='http://127.0.0.1:9')\n"
              "except OSError as error:\n    print(type(error).__name__)\n")
    done = run(script, SSL_CERT_FILE=str(tmp_path / "missing.pem"))
    assert done.returncode == 0 and done.stdout.strip() == "FileNotFoundError", done.stderr
