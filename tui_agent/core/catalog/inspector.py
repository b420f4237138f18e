"""Stdlib-only, runs INSIDE the sandbox: import a tool file, build its schema, read DEPENDS_ON/NETWORK/WRITES, run its tests."""

from __future__ import annotations

import inspect
import re
import signal
import sys
import threading
import time
import traceback
import types
from pathlib import Path
from typing import Any, Callable

from tui_agent.core.catalog.schema import SchemaError, build_schema
from tui_agent.core.errors import TuiAgentError

INSPECTOR_VERSION = 6  # 6: NETWORK may list host names; 5: a UTF-8 BOM is accepted; 4: WRITES
DEFAULT_TEST_TIMEOUT_S = 10.0


class TestTimeout(TuiAgentError):
    """A tool's own test ran past its time limit."""


def line_in_file(exc: BaseException, filename: str) -> int | None:
    """The deepest traceback line that points into `filename`."""
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == filename:
            line = frame.lineno
    return line


def failure(stage: str, message: str, line: int | None = None, tests: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"ok": False, "error": {"stage": stage, "message": message, "line": line}, "tests": tests or [],
            "inspector_version": INSPECTOR_VERSION}


def load_module(path: str, name: str) -> types.ModuleType:
    """Execute the file as module `name` from its source (no bytecode cache: edits within one second must count)."""
    source = Path(path).read_bytes()  # bytes: compile() honours a UTF-8 BOM and a coding line, as `import` does
    code = compile(source, path, "exec", dont_inherit=True)
    module = types.ModuleType(name)
    module.__file__ = path
    previous = sys.modules.get(name)
    sys.modules[name] = module
    try:
        exec(code, module.__dict__)
    except BaseException:
        if previous is None:
            sys.modules.pop(name, None)
        else:
            sys.modules[name] = previous
        raise
    return module


def run_with_timeout(function: Callable[[], Any], timeout_s: float) -> None:
    """Call `function`; in the main thread a SIGALRM timer stops it after `timeout_s` seconds."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        function()
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise TestTimeout(f"timed out after {timeout_s:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout_s)
    try:
        function()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def module_tests(module: types.ModuleType, name: str) -> list[tuple[str, Callable[[], Any]]]:
    found = []
    for attr, value in vars(module).items():
        if attr.startswith("test_") and inspect.isfunction(value) and value.__module__ == name:
            found.append((value.__code__.co_firstlineno, attr, value))
    return [(attr, value) for _, attr, value in sorted(found)]


def run_module_tests(module: types.ModuleType, name: str, path: str, timeout_s: float) -> list[dict[str, Any]]:
    results = []
    for test_name, test in module_tests(module, name):
        started = time.perf_counter()
        entry: dict[str, Any] = {"name": test_name, "ok": True, "error": None, "line": None}
        try:
            run_with_timeout(test, timeout_s)
        except BaseException as exc:  # a failing test must never take the inspector down
            detail = str(exc) or type(exc).__name__
            entry.update(ok=False, error=f"{type(exc).__name__}: {detail}" if str(exc) else detail,
                         line=line_in_file(exc, path))
        entry["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
        results.append(entry)
    return results


HOST_NAME = re.compile(r"^(\*\.)?(?!-)[A-Za-z0-9-]{1,63}(?<!-)(\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*\.?$")


def read_network(module: types.ModuleType) -> bool | list[str]:
    """NETWORK: True (any public host name), False (absent: none) or a list of host names (`*.example.com` allowed)."""
    network = getattr(module, "NETWORK", False)
    if isinstance(network, bool):
        return network
    if isinstance(network, (list, tuple)) and all(isinstance(n, str) and HOST_NAME.match(n) for n in network):
        return [name.lower().rstrip(".") for name in network] or False
    raise ValueError(f"NETWORK must be True, False or a list of host names like ['files.example.org', "
                     f"'*.example.com'], not {network!r}"[:300])


def read_metadata(module: types.ModuleType) -> tuple[list[str], bool | list[str], bool]:
    """DEPENDS_ON (globs), NETWORK (see read_network) and WRITES (a boolean, False when absent); ValueError on a
    wrong type."""
    depends_on = getattr(module, "DEPENDS_ON", [])
    if isinstance(depends_on, str) or not isinstance(depends_on, (list, tuple)) or not all(isinstance(g, str) for g in depends_on):
        raise ValueError("DEPENDS_ON must be a list of glob strings")
    network = read_network(module)
    writes = getattr(module, "WRITES", False)
    if not isinstance(writes, bool):
        raise ValueError(f"WRITES must be True or False, not {type(writes).__name__} {writes!r}"[:200])
    return list(depends_on), network, writes


def inspect_tool_file(path: str, name: str, run_tests: bool = True, test_timeout_s: float = DEFAULT_TEST_TIMEOUT_S) -> dict[str, Any]:
    """Import the tool at `path` as module `name`; return its schema, metadata and test results as a JSON-able dict."""
    sys.dont_write_bytecode = True
    try:
        module = load_module(path, name)
    except SyntaxError as exc:
        return failure("parse", f"syntax error: {exc.msg}", exc.lineno)
    except BaseException as exc:
        return failure("inspect", f"importing the tool failed: {type(exc).__name__}: {exc}", line_in_file(exc, path))
    function = getattr(module, name, None)
    if not inspect.isfunction(function):
        return failure("inspect", f"{name} is not a function after import")
    try:
        schema = build_schema(function, name)
    except SchemaError as exc:
        return failure("schema", str(exc), function.__code__.co_firstlineno)
    try:
        depends_on, network, writes = read_metadata(module)
    except ValueError as exc:
        return failure("inspect", str(exc))
    tests = run_module_tests(module, name, path, test_timeout_s) if run_tests else []
    failed = [t for t in tests if not t["ok"]]
    if failed:
        first = failed[0]
        names = ", ".join(t["name"] for t in failed)
        return failure("tests", f"{len(failed)} of {len(tests)} tests failed ({names}): {first['error']}", first["line"], tests)
    return {"ok": True, "schema": schema, "depends_on": depends_on, "network": network, "writes": writes,
            "tests": tests,
            "inspector_version": INSPECTOR_VERSION}
