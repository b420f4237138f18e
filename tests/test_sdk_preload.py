"""The TUI's first step: the model SDK starts importing in a background thread when a model server is configured in
the environment (its seconds of CPU then also run while the terminal and git are waited for), and not at all when none is."""

from __future__ import annotations

import os
import subprocess
import sys

PRELOAD = """
import sys, threading
from tui_agent.core.agent.model import import_sdk_in_background
import_sdk_in_background()
loading = [thread for thread in threading.enumerate() if thread.name == "sdk-import"]
for thread in loading:
    thread.join(120)
print(len(loading), "anthropic" in sys.modules)
"""


def preload(**env: str) -> str:
    clean = {key: value for key, value in os.environ.items()
             if key not in ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_BASE_URL")}
    done = subprocess.run([sys.executable, "-c", PRELOAD], env={**clean, **env}, capture_output=True, text=True,
                          timeout=180, check=True)
    return done.stdout.strip()


def test_a_configured_server_starts_the_import_in_a_thread() -> None:
    assert preload(ANTHROPIC_BASE_URL="http://127.0.0.1:9") == "1 True"


def test_without_a_configured_server_nothing_is_imported() -> None:
    assert preload() == "0 False"
