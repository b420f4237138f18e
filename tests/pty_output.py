"""What a command writes to a real pseudo-terminal: for tests of what reaches a person's screen."""

from __future__ import annotations

import os
import pty
import subprocess


def on_a_terminal(argv: list[str], env: dict[str, str] | None = None, timeout_s: float = 120) -> tuple[int, str]:
    """Run `argv` with stdout and stderr on a fresh pty; its exit code and everything it wrote there."""
    leader, follower = pty.openpty()
    process = subprocess.Popen(argv, stdout=follower, stderr=follower, env=env)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the terminal closed: the process is done
            break
        if not chunk:
            break
        seen += chunk
    code = process.wait(timeout=timeout_s)
    os.close(leader)
    return code, seen.decode("utf-8", "replace")
