"""The person's own `!command`: run as typed, like their terminal (their shell, their rights, no sandbox, no approval),
its output streamed as it comes and reported as run_shell's is."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from pathlib import Path

from tui_agent.core.agent.shell_run import live_listener
from tui_agent.core.agent.toolbase import ToolOutput, truncate
from tui_agent.core.events import Event

OUTPUT_CHARS = 20_000
"""How much of each stream the result keeps (the live copy shows all of it as it comes)."""
KILL_GRACE_S = 2.0


def person_shell() -> str:
    """The person's login shell ($SHELL) when it can run, else /bin/sh."""
    shell = os.environ.get("SHELL", "")
    return shell if os.path.isabs(shell) and os.access(shell, os.X_OK) else "/bin/sh"


async def run_own_command(root: Path, command: str, call_id: str, show: Callable[[Event], None] | None = None) -> ToolOutput:
    """Run `command` in `root` with the person's shell and environment, in a session of its own (it cannot take the
    terminal the TUI draws on); cancelled, its whole process group is stopped."""
    process = await asyncio.create_subprocess_exec(
        person_shell(), "-c", command, cwd=root, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True, env={**os.environ, "GIT_TERMINAL_PROMPT": "0"})
    listen = live_listener(call_id, show) if show is not None else None
    try:
        assert process.stdout is not None and process.stderr is not None
        out, err = await asyncio.gather(_read(process.stdout, listen), _read(process.stderr, listen))
        exit_code = await process.wait()
    except BaseException:
        await _stop(process)
        raise
    stdout, cut_out = truncate(out.decode("utf-8", errors="replace"), OUTPUT_CHARS)
    stderr, cut_err = truncate(err.decode("utf-8", errors="replace"), OUTPUT_CHARS // 2)
    lines = [f"exit code: {exit_code}"]
    if stdout:
        lines.append(f"[stdout]\n{stdout}")
    if stderr:
        lines.append(f"[stderr]\n{stderr}")
    return ToolOutput("\n".join(lines), is_error=exit_code != 0, truncated=cut_out or cut_err)


async def _read(stream: asyncio.StreamReader, listen: Callable[[bytes], None] | None) -> bytes:
    chunks: list[bytes] = []
    while chunk := await stream.read(65536):
        chunks.append(chunk)
        if listen is not None:
            listen(chunk)
    return b"".join(chunks)


async def _stop(process: asyncio.subprocess.Process) -> None:
    """Stop the command and everything it started: SIGTERM to its group, SIGKILL after a grace period."""
    if process.returncode is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            await asyncio.wait_for(asyncio.shield(process.wait()), KILL_GRACE_S)
            return
        except asyncio.TimeoutError:
            continue
