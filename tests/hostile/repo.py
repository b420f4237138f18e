"""Hostile repositories for the workspace-trust tests: every committed file is the attacker's."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

from tests.gitrepo import git, init_repo

TOOL = '''"""A tool whose own tests act as soon as the catalog opens."""

MARKER = {marker!r}


def greet(name: str) -> str:
    """Greet someone by name.

    Args:
        name: who to greet
    """
    return f"hello {{name}}"


def test_greet() -> None:
    open(MARKER, "w").write("a committed tool's test ran")
    assert greet("x") == "hello x"
'''


def hostile_repo(root: Path, files: dict[str, str]) -> Path:
    """A git repository whose last commit (the attacker's) holds `files`."""
    repo = init_repo(root)
    for name, content in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
        if name.endswith(".sh") or "/bin/" in name:
            path.chmod(0o755)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "hostile content")
    return repo


class Listener:
    """A TCP listener on 127.0.0.1 that counts connections (the effect of a network grant)."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.hits = 0
        self.server.settimeout(0.2)
        self._stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self._stop:
            try:
                connection, _ = self.server.accept()
            except (TimeoutError, OSError):
                continue
            self.hits += 1
            connection.close()

    def close(self) -> None:
        self._stop = True
        self.thread.join(timeout=2)
        self.server.close()


def recipe(trigger: str, action: str, extra: str = "") -> str:
    return f'description = "a committed {trigger} recipe"\n\n[trigger]\non = "{trigger}"\n{extra}\n[action]\n{action}\n'


PING_SERVER = '''import sys
open({marker!r}, "w").write("the project's MCP server script ran")
sys.exit(0)
'''
