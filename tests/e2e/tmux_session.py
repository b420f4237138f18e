"""A tuiagent process in a real terminal (a tmux server on its own socket) with the fake Messages API as a subprocess."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
FAKE_SERVER = ROOT / "tests" / "fake_messages_api.py"


class FakeServerProcess:
    """`python tests/fake_messages_api.py --script FILE` run as a subprocess; `base_url` once it listens."""

    def __init__(self, script: list[dict[str, Any]], folder: Path) -> None:
        path = folder / "script.json"
        path.write_text(json.dumps(script), encoding="utf-8")
        self.bodies = folder / "bodies.jsonl"
        self.process = subprocess.Popen([sys.executable, str(FAKE_SERVER), "--script", str(path), "--bodies", str(self.bodies)],
                                        stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        if not line.startswith("listening on "):
            self.stop()
            raise RuntimeError(f"fake server did not start: {line!r}")
        self.base_url = line.removeprefix("listening on ")

    def received(self) -> list[dict[str, Any]]:
        """The JSON bodies of the requests received so far, in order."""
        if not self.bodies.exists():
            return []
        return [json.loads(line) for line in self.bodies.read_text(encoding="utf-8").splitlines() if line]

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()


class TmuxSession:
    """One tmux server (unique `-L` socket) running one command in a fixed-size window."""

    def __init__(self, command: list[str], *, env: dict[str, str], cwd: Path, width: int = 160, height: int = 48) -> None:
        self.socket = f"tuiagent-e2e-{os.getpid()}-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
        # COLUMNS/LINES (pytest sets them) would override the real terminal size in Textual
        shell = f"cd {shlex.quote(str(cwd))} && env -u COLUMNS -u LINES {exports} {shlex.join(command)}; echo EXITED-$?; sleep 30"
        self.tmux("new-session", "-d", "-x", str(width), "-y", str(height), "-s", "e2e", shell)

    def tmux(self, *args: str) -> str:
        environment = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES", "TMUX")}
        result = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10, env=environment)
        if result.returncode != 0:
            raise RuntimeError(f"tmux {' '.join(args)}: {result.stderr}")
        return result.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "e2e")

    def send(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "e2e", *keys)

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "e2e", "-l", text)

    def wait_for(self, predicate: Callable[[str], bool], timeout: float = 15.0, what: str = "screen") -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if predicate(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for {what}; the pane's processes: {self.processes()}; the screen "
                             f"was:\n{screen}")

    def processes(self) -> str:
        """The pane's process tree, each as `pid name state wchan` (a frozen screen: stopped, or blocked where?)."""
        try:
            stack, shown = [int(self.tmux("display", "-p", "-t", "e2e", "#{pane_pid}").strip())], []
        except (RuntimeError, ValueError, subprocess.TimeoutExpired) as error:
            return f"unknown ({error})"
        while stack:
            pid = stack.pop()
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
                wchan = Path(f"/proc/{pid}/wchan").read_text() or "-"
                stack += [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
            except OSError:
                continue
            shown.append(f"{pid} {stat[stat.find('(') + 1:stat.rfind(')')]} {stat[stat.rfind(')') + 2]} {wchan}")
        return ", ".join(shown) or "none"

    def wait_text(self, text: str, timeout: float = 15.0) -> str:
        return self.wait_for(lambda screen: text in screen, timeout, repr(text))

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, timeout=10)


@contextmanager
def echoing_tuiagent(tmp_path: Path, width: int, height: int) -> Iterator[tuple[TmuxSession, FakeServerProcess]]:
    """tuiagent in a `width`×`height` UTF-8 terminal against a fake server that answers every request "Received."."""
    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "project")
    server = FakeServerProcess([{"repeat": {"text": "Received."}}], tmp_path)
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url, "TERM": "xterm-256color",
           "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}
    terminal = TmuxSession([sys.executable, "-m", "tui_agent.cli", "--project", str(repo)], env=env, cwd=repo,
                           width=width, height=height)
    try:
        yield terminal, server
    finally:
        terminal.close()
        server.stop()
