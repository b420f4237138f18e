"""A fake "internet" host for tests/net_scenario.py, run inside a network namespace of its own: HTTP on port 80 and
HTTPS (a self-signed certificate) on 443, on every address it has, serving a folder and logging each request as
`address host path` to a file, so a test sees exactly what reached it and through which address."""

from __future__ import annotations

import functools
import http.server
import ssl
import sys
import threading
from pathlib import Path
from typing import Any


class Logged(http.server.SimpleHTTPRequestHandler):
    log_file: Path

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        address = self.connection.getsockname()[0]
        host = self.headers.get("Host", "-")
        with self.log_file.open("a") as log:
            log.write(f"{address} {host} {self.path}\n")

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.startswith("/redirect?to="):  # a redirect to wherever the test asks (a fetch must re-check it)
            self.send_response(302)
            self.send_header("Location", self.path.split("=", 1)[1])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        super().do_GET()


class Server(http.server.ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # a client that hangs up early (a refused probe's socket) is no failure of this host


def main() -> None:
    docroot, log_file, cert, key, ready = (Path(arg) for arg in sys.argv[1:6])
    handler = type("Handler", (Logged,), {"log_file": log_file})
    plain = Server(("0.0.0.0", 80), functools.partial(handler, directory=str(docroot)))
    secure = Server(("0.0.0.0", 443), functools.partial(handler, directory=str(docroot)))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    secure.socket = context.wrap_socket(secure.socket, server_side=True)
    threading.Thread(target=secure.serve_forever, daemon=True).start()
    ready.write_text("ready")
    plain.serve_forever()


if __name__ == "__main__":
    main()
