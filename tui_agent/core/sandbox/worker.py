"""The sandboxed interpreter's entry script (stdlib only; its guard builds seccomp filters with libseccomp): one request in on a private channel, one result out."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import linecache
import os
import sys
import traceback
import types
from typing import Any, Callable

SNIPPET_NAME = "<run_python>"
VALUE_LIMIT = 1_000_000
LIMIT_ERRORS = (MemoryError,)


def read_request(channel: int) -> dict[str, Any]:
    chunks: list[bytes] = []
    while True:
        chunk = os.read(channel, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        if chunk.endswith(b"\n"):
            break
    request: dict[str, Any] = json.loads(b"".join(chunks) or b"null")
    return request


class FileReads:
    """An audit hook recording files opened for reading inside the project (bookkeeping, not security)."""

    def __init__(self, project: str, excluded_dirs: list[str], excluded_files: list[str]) -> None:
        self.project = os.path.realpath(project)
        self.excluded_dirs = [os.path.realpath(d) + os.sep for d in excluded_dirs]
        self.excluded_files = {os.path.realpath(f) for f in excluded_files}
        self.paths: set[str] = set()
        self.active = False

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event != "open" or not self.active:
            return
        path, mode, flags = args
        if not isinstance(path, (str, bytes, os.PathLike)):
            return
        if mode is not None and "r" not in mode and "+" not in mode:
            return
        if mode is None and isinstance(flags, int) and flags & os.O_ACCMODE == os.O_WRONLY:
            return
        self.active = False
        try:
            full = os.path.realpath(os.fsdecode(path))
            if full.startswith(self.project + os.sep) and full not in self.excluded_files:
                if not any(full.startswith(d) for d in self.excluded_dirs) and os.path.isfile(full):
                    self.paths.add(os.path.relpath(full, self.project).replace(os.sep, "/"))
        finally:
            self.active = True


def encode_value(value: Any) -> tuple[Any, bool]:
    try:
        text = json.dumps(value, allow_nan=False)
    except (TypeError, ValueError, RecursionError):
        try:
            text_repr = repr(value)
        except Exception as exc:  # a hostile __repr__
            text_repr = f"<unrepresentable {type(value).__name__}: {type(exc).__name__}>"
        if len(text_repr) > VALUE_LIMIT:
            text_repr = text_repr[:VALUE_LIMIT] + f"... [repr cut at {VALUE_LIMIT} characters]"
        return text_repr, True
    if len(text) > VALUE_LIMIT:
        return text[:VALUE_LIMIT] + f"... [value cut at {VALUE_LIMIT} characters]", True
    return value, False


class OwnFiles:
    """The files whose frames a traceback keeps: the snippet, the named files, and any `.py` in the tool folders.

    Membership is checked per frame, so a run never lists a catalog of a thousand tools up front.
    """

    def __init__(self, files: set[str], folders: list[str]) -> None:
        self.files = files
        self.folders = {os.path.realpath(folder) for folder in folders}

    def __contains__(self, filename: object) -> bool:
        if not isinstance(filename, str):
            return False
        if filename in self.files:
            return True
        real = os.path.realpath(filename)
        return real in self.files or (real.endswith(".py") and os.path.dirname(real) in self.folders)


def trimmed_traceback(exc: BaseException, own_files: "set[str] | OwnFiles") -> str:
    """The traceback keeping only frames of the tool's own files (or the snippet), then the exception line."""
    frames = [
        frame for frame in traceback.extract_tb(exc.__traceback__)
        if frame.filename in own_files or os.path.realpath(frame.filename) in own_files
    ]
    text = "".join(traceback.format_exception_only(type(exc), exc))
    if frames:
        text = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames)) + text
    return text


def load_named_module(name: str, package_parent: str) -> types.ModuleType:
    """Import `name`; a `tui_agent.*` module is loaded from its file alone, without the package's __init__ chain."""
    if name.startswith("tui_agent."):
        if name in sys.modules:  # preloaded by the fork server this run was forked from
            return sys.modules[name]
        path = os.path.join(package_parent, *name.split(".")) + ".py"
        return load_file_module(name, path)
    return importlib.import_module(name)


def load_file_module(name: str, path: str, *, register: bool = True,
                     compiled: tuple[Any, types.CodeType] | None = None) -> types.ModuleType:
    """The module in the file at `path`, named `name` (in `sys.modules` unless not `register`); `compiled`: its
    spec and code, read and compiled beforehand (by a batch's process, once for all its calls: fanout.py)."""
    spec, code = compiled if compiled is not None else (importlib.util.spec_from_file_location(name, path), None)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    if register:
        sys.modules[name] = module
    if code is None:
        spec.loader.exec_module(module)
    else:  # as exec_module does with the code it reads
        exec(code, module.__dict__)
    return module


class ToolFinder:
    """Imports each named tool from the exact file given (the catalog's last good copy), not from `.agent/tools/`."""

    def __init__(self, paths: dict[str, str]) -> None:
        self.paths = paths

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        file = self.paths.get(fullname)
        if file is None:
            return None
        return importlib.util.spec_from_file_location(fullname, file)


def install_tool_finder(paths: dict[str, str]) -> None:
    """Before the path finder (as a sys.path entry would be), after built-in and frozen modules."""
    finder = ToolFinder(paths)
    import importlib.machinery

    position = next((i for i, f in enumerate(sys.meta_path) if f is importlib.machinery.PathFinder), len(sys.meta_path))
    sys.meta_path.insert(position, finder)


def finish_value(value: Any) -> Any:
    if inspect.iscoroutine(value):
        import asyncio

        return asyncio.run(value)
    return value


def run_call(request: dict[str, Any], package_parent: str,
             compiled: dict[tuple[str, str], tuple[Any, types.CodeType]] | None = None) -> Any:
    module_path = request.get("module_path")
    if module_path:
        module = load_file_module(request["module"], module_path,
                                  compiled=(compiled or {}).get((request["module"], str(module_path))))
    else:
        module = load_named_module(request["module"], package_parent)
    function = getattr(module, request["function"])
    return finish_value(function(**request.get("kwargs", {})))


def load_sibling(filename: str, *, register: bool = True) -> types.ModuleType:
    """A stdlib-only helper module next to this script, loaded by path (once per process when `register`; the guard
    and the bridge client stay out of `sys.modules`, where agent code would find them by name)."""
    name = f"_tuiagent_{filename[:-3]}"
    if register and name in sys.modules:
        return sys.modules[name]
    return load_file_module(name, os.path.join(os.path.dirname(os.path.abspath(__file__)), filename), register=register)


def describe_error(exc: BaseException, own: Any) -> tuple[str, str]:
    kind = "limit" if isinstance(exc, LIMIT_ERRORS) or (isinstance(exc, OSError) and exc.errno == 27) else "exception"
    try:
        return kind, trimmed_traceback(exc, own)
    except BaseException:
        return kind, f"{type(exc).__name__} (its message could not be formatted)"


def run_call_each(request: dict[str, Any], package_parent: str, own: Any, guard: types.ModuleType,
                  prepare: Callable[[], None] | None, reads: FileReads) -> list[dict[str, Any]]:
    """`module.function(**kwargs)` for each kwargs in `calls`, or, without a `module`, each call's own module file,
    function and kwargs (a reply's tool calls: each answer lists the files its call read); each call in its own
    forked child (fanout.py)."""
    reads.active = False  # on only while a call of a reply's batch runs (in its child): it reports what it read
    if request.get("module"):
        module = load_named_module(request["module"], package_parent)
        function = getattr(module, request["function"])
        run_one: Callable[[Any], Any] = lambda kwargs: finish_value(function(**kwargs))  # noqa: E731
        report: Callable[[], dict[str, Any]] = dict
    else:
        compiled = load_sibling("fanout.py").compile_module_files(list(request["calls"]))

        def run_one(call: Any) -> Any:
            reads.paths.clear()
            reads.active = True
            try:
                return run_call(call, package_parent, compiled)
            finally:
                reads.active = False

        def report() -> dict[str, Any]:
            return {"files_read": sorted(reads.paths)}

    def between() -> None:
        guard.kill_descendants()
        if prepare is not None:
            prepare()

    outcomes: list[dict[str, Any]] = load_sibling("fanout.py").call_each(
        list(request["calls"]), run_one, timeout_s=float(request["call_timeout_s"]), encode=encode_value,
        describe_error=lambda exc: describe_error(exc, own), between=between, report=report)
    return outcomes


def run_exec(code: str) -> Any:
    """Run a snippet; when its last statement is an expression, that expression's value is the result."""
    linecache.cache[SNIPPET_NAME] = (len(code), None, code.splitlines(keepends=True), SNIPPET_NAME)
    tree = ast.parse(code, SNIPPET_NAME, "exec")
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    last_expr = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        final = tree.body.pop()
        assert isinstance(final, ast.Expr)
        last_expr = ast.Expression(final.value)
    exec(compile(tree, SNIPPET_NAME, "exec"), namespace)
    if last_expr is None:
        return None
    return finish_value(eval(compile(last_expr, SNIPPET_NAME, "eval"), namespace))


def run_script(path: str, code: str) -> Any:
    """Run a file's text as `__main__` (the text comes over the channel: the file may be outside the sandbox's view)."""
    sys.argv = [path]
    linecache.cache[path] = (len(code), None, code.splitlines(keepends=True), path)
    namespace: dict[str, Any] = {"__name__": "__main__", "__file__": path, "__builtins__": __builtins__}
    exec(compile(code, path, "exec"), namespace)
    return None


BOOTED = b"U"


def main() -> None:
    channel, project, package_parent = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    guard = load_sibling("worker_guard.py", register=False)
    if sys.argv[4:5] == ["serve"]:
        load_sibling("zygote.py", register=False).serve(channel, scratch=sys.argv[5:], preload=lambda: preload(package_parent, guard),
                            harden=guard.make_undumpable,
                            run_one=lambda run_channel, prepare: run_request(run_channel, project, package_parent,
                                                                             guard, prepare))
        os._exit(0)
    if any(arg.startswith("net=") for arg in sys.argv[4:]):  # before any agent code runs, and before BOOTED
        load_sibling("netrelay.py").hand_over_from_argv(sys.argv[4:])
    os.write(channel, BOOTED)  # the sandbox started: what fails after this is the run's, not bubblewrap's
    run_request(channel, project, package_parent, guard)


PRELOADED = ("tui_agent.core.catalog.inspector",)
"""Imported once by a fork server, before any request: every forked run starts with them in memory."""


def preload(package_parent: str, guard: types.ModuleType) -> None:
    for name in PRELOADED:
        load_named_module(name, package_parent)
    load_sibling("fanout.py")
    guard.prepare_run_filters(os.getpid(), 1)  # every child's filter (see run_request), built once and inherited


def run_request(channel: int, project: str, package_parent: str, guard: types.ModuleType,
                prepare: Callable[[], None] | None = None) -> None:
    """Serve the one request on `channel`: limits and seccomp first, then the code; the process exits at the end."""
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    # as process 1 of its sandbox (bubblewrap's --as-pid-1) the worker's parent is outside: -1, refused anyway
    protected_pid, own_group = os.getppid() or -1, os.getpgrp()
    prepared: dict[bool, bytes] = {}
    if prepare is not None:  # a fork server's child: the filter the server built once; like process 1 of a fresh
        own_group = 1  # sandbox it signals no group by a negative pid (kill(0, ...) still reaches its own)
        prepared = guard.prepare_run_filters(protected_pid, own_group)
    request = read_request(channel)
    if request is None:
        os._exit(3)
    if prepare is not None:
        prepare()
    reads, own = install_request_context(request, channel, project)
    # `bounded` (bubblewrap): what the run leaves ends with it (this process is its PID namespace's init, or a fork
    # server's child in its own cgroup, which the host kills); the weak tier's worker adopts and kills its descendants
    # (they could hold its output pipes open past its exit), and a batch ends each call's before the next (fanout.py)
    own_stop = not request.get("bounded") or request["op"] == "call_each"
    protections = {
        "subreaper": own_stop and guard.become_subreaper(),
        "capabilities_dropped": guard.drop_capabilities(),
    }
    guard.apply_rlimits(request["policy"])
    program = guard.run_program(prepared, request.get("seccomp"), bool(request["policy"].get("network")),
                                protected_pid, own_group)
    protections["seccomp"] = guard.install_seccomp(program)
    worker_pid = os.getpid()
    response: dict[str, Any] = {"protections": protections}
    exit_status = 0
    reads.active = True
    try:
        value = run_op(request, package_parent, own, guard, prepare, reads, own_stop)
        reads.active = False
        encoded, is_repr = encode_value(value)
        response.update(ok=True, value=encoded, value_is_repr=is_repr)
    except SystemExit as exc:
        reads.active = False
        exit_status = exit_answer(exc, response)
    except BaseException as exc:  # everything the code raises is reported, never re-raised
        reads.active = False
        exit_status = 1
        kind, message = describe_error(exc, own)
        response.update(ok=False, value=None, value_is_repr=False, error=message, error_kind=kind)
    if os.getpid() != worker_pid:
        os._exit(exit_status)  # a fork of the code fell through to here: only the worker itself answers
    response["files_read"] = sorted(reads.paths)
    response["exit_status"] = exit_status
    send_answer(channel, response, guard.kill_descendants if own_stop else None)
    os._exit(exit_status)


def install_request_context(request: dict[str, Any], channel: int, project: str) -> tuple[FileReads, OwnFiles]:
    """Make the request's tools importable (and its MCP tools callable), and start recording the files it reads."""
    tool_dirs: list[str] = [d for d in request.get("tool_dirs", []) if os.path.isdir(d)]
    own_files = {SNIPPET_NAME, *(os.path.realpath(p) for p in request.get("own_files", []))}
    tool_paths = request.get("tool_paths")
    if isinstance(tool_paths, dict):
        install_tool_finder({str(name): str(path) for name, path in tool_paths.items()})
        own_files.update(os.path.realpath(str(path)) for path in tool_paths.values())
    if isinstance(request.get("bridge_tools"), dict):  # MCP tools, called through the runtime (bridge_client.py)
        load_sibling("bridge_client.py", register=False).install(channel, request["bridge_tools"])
    sys.path[:0] = tool_dirs
    reads = FileReads(project, tool_dirs, list(own_files - {SNIPPET_NAME}))  # the tool folders are excluded whole
    sys.addaudithook(reads.hook)
    return reads, OwnFiles(own_files, tool_dirs)


def run_op(request: dict[str, Any], package_parent: str, own: Any, guard: types.ModuleType,
           prepare: Callable[[], None] | None, reads: FileReads, own_stop: bool) -> Any:
    """The value of the request's operation: a call, a snippet, a script, a shell command, or a batch of calls."""
    op = request["op"]
    if op == "shell":
        return load_sibling("shell_child.py").run_shell(request["command"], float(request["command_timeout_s"]),
                                                         int(request["keep_bytes"]),
                                                         guard.kill_descendants, own_stop)
    if op == "call":
        return run_call(request, package_parent)
    if op == "exec":
        return run_exec(request["code"])
    if op == "script":
        return run_script(request["path"], request["code"])
    if op == "call_each":
        return run_call_each(request, package_parent, own, guard, prepare, reads)
    raise ValueError(f"unknown op {op!r}")


def exit_answer(exc: SystemExit, response: dict[str, Any]) -> int:
    """The answer for code that called `sys.exit`: ok on status 0; its exit status."""
    code = exc.code
    exit_status = code if isinstance(code, int) else (0 if code is None else 1)
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)
    ok = exit_status == 0
    response.update(ok=ok, value=None, value_is_repr=False, exit_status=exit_status)
    if not ok:
        response.update(error=f"SystemExit: {code}", error_kind="exception")
    return exit_status


def send_answer(channel: int, response: dict[str, Any], kill_descendants: Callable[[], Any] | None) -> None:
    """Flush what the code printed, end what it left running (`kill_descendants`, when the host cannot), then write
    the answer line on the channel."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # the code under test may have closed or replaced the stream; the answer goes on its own pipe
            pass
    if kill_descendants is not None:
        kill_descendants()
    view = memoryview((json.dumps(response) + "\n").encode())
    while view:
        written = os.write(channel, view)
        view = view[written:]


if __name__ == "__main__":
    main()
