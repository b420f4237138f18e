"""The model client's TLS context, made on another thread while the SDK imports: loading the CA bundle outside the interpreter's lock."""

from __future__ import annotations

import importlib.util
import sys
import threading
from concurrent.futures import Future
from types import ModuleType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ssl

_lock = threading.Lock()
_made: list[Future[ssl.SSLContext]] = []  # at most one: a process makes the context once


def start() -> None:
    """Begin making the context the SDK's HTTP client makes by default (`httpx2.create_ssl_context()`: the same CA
    bundle, `SSL_CERT_FILE` and `SSL_CERT_DIR`), once per process, on a thread of its own: OpenSSL reads the bundle
    (about 15 ms) without the interpreter's lock, so it overlaps the SDK's import instead of following it. Nothing
    is started when httpx2 is not installed (an SDK built on httpx makes its own)."""
    with _lock:
        if _made or importlib.util.find_spec("httpx2") is None:
            return
        future: Future[ssl.SSLContext] = Future()
        _made.append(future)
    threading.Thread(target=_make, args=(future,), name="tls-context", daemon=True).start()


def _make(future: Future[ssl.SSLContext]) -> None:
    try:
        import httpx2

        future.set_result(httpx2.create_ssl_context())
    except BaseException as error:  # a missing SSL_CERT_FILE: raised where the client is made, as the SDK would
        future.set_exception(error)


def http_client(sdk: ModuleType, timeout_s: float) -> Any:
    """An HTTP client with the SDK's own defaults (`DefaultAsyncHttpxClient`) and the context `start` made, for the
    SDK's `http_client=`; None (the SDK makes its own) when none was started or the SDK's client is not httpx2's."""
    httpx2 = sys.modules.get("httpx2")
    if not _made or httpx2 is None or not issubclass(sdk.DefaultAsyncHttpxClient, httpx2.AsyncClient):
        return None
    return sdk.DefaultAsyncHttpxClient(verify=_made[0].result(), timeout=timeout_s)
