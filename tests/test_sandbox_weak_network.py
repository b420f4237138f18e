"""Issue 33 on the rlimits tier: a network grant must not hand agent code this machine's network. Without a network
namespace nothing keeps a granted run off the host's loopback and LAN, so such a run is refused, saying why."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy
from tui_agent.core.sandbox import Snippet, ToolCall


class Listener:
    """A TCP listener on 127.0.0.1 that records every connection it accepts (checked outside the sandbox)."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.server.settimeout(0.2)
        self.port = self.server.getsockname()[1]
        self.heard: list[bytes] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _address = self.server.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            with connection:
                connection.settimeout(1.0)
                try:
                    self.heard.append(connection.recv(100) or b"<connected>")
                except OSError:
                    self.heard.append(b"<connected>")

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.server.close()


@pytest.fixture
def listener() -> Iterator[Listener]:
    found = Listener()
    yield found
    found.close()


def connect_code(port: int) -> str:
    return (f"import socket\nc = socket.create_connection(('127.0.0.1', {port}), timeout=3)\n"
            "c.sendall(b'leak')\nc.close()\n'reached'")


async def test_a_granted_snippet_on_the_weak_tier_does_not_reach_a_loopback_listener(tmp_path: Path,
                                                                                      listener: Listener) -> None:
    # the positive control: this machine's own processes do reach the listener
    with socket.create_connection(("127.0.0.1", listener.port), timeout=3) as client:
        client.sendall(b"control")
    box = await Sandbox.start(Project.at(tmp_path), tier="rlimits", warm_workers=0)
    try:
        results = [await box.run(Snippet(connect_code(listener.port)), SandboxPolicy(timeout_s=10, network=grant))
                   for grant in (True, ("localhost", "127.0.0.1"))]
    finally:
        await box.aclose()
    threading.Event().wait(0.3)
    assert listener.heard == [b"control"], listener.heard
    for result in results:
        assert not result.ok and result.value is None, result
        assert result.error is not None and "bubblewrap" in result.error and "loopback" in result.error, result.error


async def test_a_granted_tool_call_on_the_weak_tier_is_refused_before_it_runs(tmp_path: Path,
                                                                              listener: Listener) -> None:
    tool = tmp_path / "reach.py"
    tool.write_text(f"def reach() -> str:\n    open({str(tmp_path / 'ran')!r}, 'w').close()\n"
                    f"    exec({connect_code(listener.port)!r})\n    return 'reached'\n")
    box = await Sandbox.start(Project.at(tmp_path), tier="rlimits", warm_workers=0)
    try:
        result = await box.run(ToolCall("reach", "reach", {}, str(tool)), SandboxPolicy(timeout_s=10, network=True))
        ran_granted = (tmp_path / "ran").exists()
        offline = await box.run(ToolCall("reach", "reach", {}, str(tool)), SandboxPolicy(timeout_s=10))
    finally:
        await box.aclose()
    threading.Event().wait(0.3)
    assert listener.heard == []
    assert not result.ok and result.error is not None and "needs the bubblewrap tier" in result.error, result
    assert not offline.ok and "Operation not permitted" in (offline.error or ""), offline  # seccomp, as before
    assert not ran_granted and (tmp_path / "ran").exists()  # only the granted call was refused, before it ran
