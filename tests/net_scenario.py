"""Run by tests/test_sandbox_network.py under `unshare -rnm` (a user, network and mount namespace of its own, so
nothing here touches the machine's network): builds a fake "internet" host in a second network namespace joined by
a veth pair (198.18.0.1, and 10.77.0.2 as a LAN address), names for it in a private /etc/hosts, TCP listeners on
this namespace's loopback and own address, then runs sandboxed snippets under network grants and prints, as JSON,
what each probe got and what every listener heard. Only addresses inside these namespaces are ever contacted."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import ssl
import subprocess
import sys
import threading
import time
import zipfile
from pathlib import Path
from typing import Any

from tui_agent.core.project import Project
from tui_agent.core.sandbox import Sandbox, SandboxPolicy
from tui_agent.core.sandbox import Snippet

TEST_PUBLIC_NETS_ENV = "TUIAGENT_TEST_PUBLIC_NETS"  # the test-only variable network/policy.py reads

HOSTS = """127.0.0.1 localhost
::1 localhost
198.18.0.1 files.example.org a.cdn.example.org other.example.net
127.0.0.1 sneaky.example.org
10.77.0.2 lan.example.org
198.18.0.2 self.example.org
"""
NAMES = ("files.example.org", "*.cdn.example.org", "sneaky.example.org", "lan.example.org", "self.example.org")

PRELUDE = r'''
import functools, socket, ssl, subprocess, urllib.request, urllib.error
def answered(probe):
    @functools.wraps(probe)
    def run(*args):
        try:
            return probe(*args)
        except OSError as e:
            return f'error {e!r}'
    return run
def direct(host, port, tag):
    try:
        s = socket.create_connection((host, port), timeout=2)
        s.sendall(f'GET /{tag} HTTP/1.0\r\nHost: {host}\r\n\r\n'.encode()); s.recv(100); s.close()
        return 'connected'
    except OSError as e:
        return f'failed: {e}'
@answered
def ask_proxy(raw):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
    s.sendall(raw.encode())
    data = b''
    while b'\r\n\r\n' not in data or raw.startswith('GET'):
        chunk = s.recv(4096)
        if not chunk:
            break
        data += chunk
    s.close()
    head, _, body = data.decode(errors='replace').partition('\r\n\r\n')
    return head.split('\r\n')[0] + ' | ' + body.strip()
def forward(url):
    host = url.split('/')[2]
    return ask_proxy(f'GET {url} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n')
@answered
def connect(target, tag):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
    s.sendall(f'CONNECT {target} HTTP/1.1\r\nHost: {target}\r\n\r\n'.encode())
    head = s.recv(4096).decode(errors='replace')
    if head.startswith('HTTP/1.1 200'):
        s.sendall(f'GET /{tag} HTTP/1.0\r\nHost: x\r\n\r\n'.encode()); s.recv(100)
    s.close()
    return head.split('\r\n')[0] + ' | ' + head.partition('\r\n\r\n')[2].strip()
@answered
def socks(host, port, tag):
    s = socket.create_connection(('127.0.0.1', 3128), timeout=10)
    s.sendall(b'\x05\x01\x00'); s.recv(2)
    s.sendall(b'\x05\x01\x00\x03' + bytes([len(host)]) + host.encode() + port.to_bytes(2, 'big'))
    reply = s.recv(10)
    if reply[1] == 0:
        s.sendall(f'GET /{tag} HTTP/1.0\r\nHost: {host}\r\n\r\n'.encode())
        answer = s.recv(100).decode(errors='replace').split('\r\n')[0]
    else:
        answer = ''
    s.close()
    return f'socks {reply[1]} {answer}'.strip()
def urllib_get(url):
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ssl._create_unverified_context()))
    try:
        return f'{opener.open(url, timeout=10).status}'
    except urllib.error.HTTPError as e:
        return f'{e.code} {e.read().decode().strip()}'
    except Exception as e:
        return f'error {e!r}'
'''

NAMED_PROBES = '''{
  "files_forward": forward("http://files.example.org/hello.txt"),
  "files_https": urllib_get("https://files.example.org/hello.txt"),
  "wildcard": forward("http://a.cdn.example.org/hello.txt"),
  "files_socks": socks("files.example.org", 80, "socks-files"),
  "files_direct": direct("198.18.0.1", 80, "direct-files"),
  "outside_forward": forward("http://other.example.net/outside-forward"),
  "outside_connect": connect("other.example.net:443", "outside-connect"),
  "outside_socks": socks("other.example.net", 80, "outside-socks"),
  "outside_direct": direct("other.example.net", 80, "outside-direct"),
  "sneaky_forward": forward("http://sneaky.example.org:{loop_port}/sneaky-forward"),
  "sneaky_connect": connect("sneaky.example.org:{loop_port}", "sneaky-connect"),
  "sneaky_direct": direct("sneaky.example.org", {loop_port}, "sneaky-direct"),
  "lan_name": forward("http://lan.example.org/lan-name"),
  "self_name": connect("self.example.org:{own_port}", "self-name"),
  "literal_outside_names": forward("http://198.18.0.1/literal"),
  "outside_host_header": ask_proxy("GET http://files.example.org/host-header HTTP/1.1\\r\\nHost: other.example.net"
                                   "\\r\\nConnection: close\\r\\n\\r\\n"),
}'''

ANY_PROBES = '''{
  "public_literal": forward("http://198.18.0.1/hello.txt"),
  "loopback_forward": forward("http://127.0.0.1:{loop_port}/loopback-forward"),
  "loopback_connect": connect("127.0.0.1:{loop_port}", "loopback-connect"),
  "loopback_mapped": connect("[::ffff:127.0.0.1]:{loop_port}", "loopback-mapped"),
  "loopback_decimal": connect("2130706433:{loop_port}", "loopback-decimal"),
  "loopback_direct": direct("127.0.0.1", {loop_port}, "loopback-direct"),
  "localhost_connect": connect("localhost:{loop_port}", "localhost-connect"),
  "localhost_socks": socks("localhost", {loop_port}, "localhost-socks"),
  "own_connect": connect("198.18.0.2:{own_port}", "own-connect"),
  "own_direct": direct("198.18.0.2", {own_port}, "own-direct"),
  "private_forward": forward("http://10.77.0.2/private-forward"),
  "private_direct": direct("10.77.0.2", 80, "private-direct"),
  "lan_name": forward("http://lan.example.org/lan-name-any"),
}'''

TOOLS = '''
import os, sys
def sh(command):
    done = subprocess.run(command, shell=True, capture_output=True, text=True, timeout=120)
    return f'{done.returncode} {done.stdout.strip()[-300:]} {done.stderr.strip()[-600:]}'
{
  "pip": sh(f"{sys.executable} -m pip install --no-cache-dir --disable-pip-version-check -q --target /tmp/t "
            "--index-url https://files.example.org/simple/ --trusted-host files.example.org tinynetpkg && "
            f"{sys.executable} -c 'import sys; sys.path.insert(0, \\"/tmp/t\\"); import tinynetpkg; print(tinynetpkg.VALUE)'"),
  "git": sh("git -c http.sslVerify=false clone -q https://files.example.org/repo.git /tmp/r && cat /tmp/r/README"),
  "env": os.environ.get("HTTPS_PROXY", ""),
}
'''


class Recorder:
    """A TCP listener recording the first bytes of every connection it accepts."""

    def __init__(self, address: str) -> None:
        self.sock = socket.create_server((address, 0))
        self.port = self.sock.getsockname()[1]
        self.heard: list[str] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _peer = self.sock.accept()
            except OSError:
                return
            conn.settimeout(1)
            try:
                self.heard.append(conn.recv(200).decode(errors="replace").split("\r\n")[0] or "<connected>")
                conn.sendall(b"HTTP/1.0 200 OK\r\n\r\nhost service\n")
            except OSError:
                self.heard.append("<connected>")
            conn.close()


def sh(*argv: str) -> None:
    subprocess.run(argv, check=True, capture_output=True, timeout=30)


def build_docroot(work: Path) -> Path:
    docroot = work / "docroot"
    (docroot / "simple" / "tinynetpkg").mkdir(parents=True)
    (docroot / "hello.txt").write_text("hello from the fake internet\n")
    wheel = docroot / "simple" / "tinynetpkg" / "tinynetpkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("tinynetpkg/__init__.py", "VALUE = 'installed through the proxy'\n")
        archive.writestr("tinynetpkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: tinynetpkg\nVersion: 1.0\n")
        archive.writestr("tinynetpkg-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\n"
                                                          "Tag: py3-none-any\n")
        archive.writestr("tinynetpkg-1.0.dist-info/RECORD", "")
    (docroot / "simple" / "tinynetpkg" / "index.html").write_text(f'<a href="{wheel.name}">{wheel.name}</a>\n')
    source = work / "source"
    sh("git", "init", "-q", str(source))
    (source / "README").write_text("cloned through the proxy\n")
    sh("git", "-C", str(source), "add", "README")
    sh("git", "-C", str(source), "-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "-qm", "one")
    sh("git", "clone", "-q", "--bare", str(source), str(docroot / "repo.git"))
    sh("git", "-C", str(docroot / "repo.git"), "update-server-info")
    return docroot


def start_internet(work: Path) -> subprocess.Popen[bytes]:
    """The fake internet host in its own network namespace, joined to this one by a veth pair."""
    sh("ip", "link", "set", "lo", "up")
    hosts = work / "hosts"
    hosts.write_text(HOSTS)
    sh("mount", "--bind", str(hosts), "/etc/hosts")
    cert, key = work / "cert.pem", work / "key.pem"
    sh("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
       "-subj", "/CN=files.example.org", "-addext", "subjectAltName=DNS:files.example.org,DNS:a.cdn.example.org",
       "-keyout", str(key), "-out", str(cert))
    ready = work / "ready"
    server = subprocess.Popen(["unshare", "-n", sys.executable, str(Path(__file__).with_name("fake_internet.py")),
                               str(build_docroot(work)), str(work / "internet.log"), str(cert), str(key), str(ready)])
    deadline = time.monotonic() + 10
    while not ready.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    pid = str(server.pid)
    sh("ip", "link", "add", "veth-host", "type", "veth", "peer", "name", "veth-net", "netns", pid)
    for address in ("198.18.0.2/24", "10.77.0.1/24"):
        sh("ip", "addr", "add", address, "dev", "veth-host")
    sh("ip", "link", "set", "veth-host", "up")
    inside = "ip link set lo up && ip addr add 198.18.0.1/24 dev veth-net && ip addr add 10.77.0.2/24 dev veth-net " \
             "&& ip link set veth-net up"
    sh("nsenter", "-t", pid, "-n", "sh", "-c", inside)
    return server


async def probes(work: Path, loop: Recorder, own: Recorder) -> dict[str, Any]:
    project_dir = work / "project"
    sh("git", "init", "-q", str(project_dir))
    project = Project.at(project_dir)
    project.ensure_layout()
    box = await Sandbox.start(project, tier="bubblewrap", warm_workers=0)
    fill = {"loop_port": loop.port, "own_port": own.port}
    results: dict[str, Any] = {}
    try:
        for key, grant, body in (("named", NAMES, NAMED_PROBES), ("any", True, ANY_PROBES),
                                 ("tools", ("files.example.org",), TOOLS)):
            code = PRELUDE + body.replace("{loop_port}", str(fill["loop_port"])).replace("{own_port}",
                                                                                         str(fill["own_port"]))
            result = await box.run(Snippet(code), SandboxPolicy(network=grant, timeout_s=120, cpu_s=120))
            results[key] = result.value if result.ok else {"error": result.error, "stderr": result.stderr}
            results[key + "_stderr"] = result.stderr
    finally:
        await box.aclose()
    results["fetch"] = await fetches(work, loop)
    return results


async def fetches(work: Path, loop: Recorder) -> dict[str, str]:
    try:
        from tui_agent.core.network.policy import Refused, fetch
    except ImportError as missing:  # code from before the proxy: the sandbox probes above still run and are reported
        return {"missing": str(missing)}
    context = ssl.create_default_context(cafile=str(work / "cert.pem"))
    answers: dict[str, str] = {}
    for key, url, grant in (
        ("https", "https://files.example.org/hello.txt", ("files.example.org",)),
        ("loopback", f"http://localhost:{loop.port}/fetch-loopback", True),
        ("outside", "http://other.example.net/fetch-outside", ("files.example.org",)),
        ("redirect", f"http://files.example.org/redirect?to=http://sneaky.example.org:{loop.port}/fetch-redirect",
         ("files.example.org", "sneaky.example.org")),
    ):
        try:
            got = await fetch(url, grant, context=context, timeout_s=10)
            answers[key] = f"{got.status} {got.body.decode(errors='replace').strip()}"
        except Refused as refused:
            answers[key] = f"refused: {refused}"
        except OSError as exc:
            answers[key] = f"error: {exc}"
    return answers


def main() -> None:
    work = Path(sys.argv[1])
    os.environ[TEST_PUBLIC_NETS_ENV] = "198.18.0.0/15"
    server = start_internet(work)
    try:
        loop, own = Recorder("127.0.0.1"), Recorder("198.18.0.2")
        results = asyncio.run(probes(work, loop, own))
        control = []
        for address, port in (("127.0.0.1", loop.port), ("198.18.0.2", own.port), ("10.77.0.2", 80)):
            with socket.create_connection((address, port), timeout=5) as client:  # the listeners really hear
                client.sendall(f"GET /control HTTP/1.0\r\nHost: {address}\r\n\r\n".encode())
                control.append(client.recv(100).decode(errors="replace").split("\r\n")[0])
        time.sleep(0.2)
        log = work / "internet.log"
        results.update(loopback_heard=loop.heard, own_heard=own.heard, control=control,
                       internet_log=log.read_text().splitlines() if log.exists() else [])
        print(json.dumps(results))
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
