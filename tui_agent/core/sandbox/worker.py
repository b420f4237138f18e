"""The sandboxed interpreter's entry script (stdlib only; its guard builds seccomp filters with libseccomp): one request in on a private channel (a snippet's MCP calls asked on it), one result out."""

from __future__ import annotations

import ast
import contextlib
import importlib.machinery
import importlib.util
import json
import linecache
import os
import signal
import sys
import time
import traceback
import types
from typing import TYPE_CHECKING, Any, Callable

import _socket  # not `socket`: its enum set-up costs a run 10-30 ms on a busy machine

if TYPE_CHECKING:
    from tui_agent.core.sandbox.worker_guard import Kept

SNIPPET_NAME = "<run_python>"
VALUE_LIMIT = 1_000_000
BOOTED = b"U"
COMPILED: dict[tuple[str, str], tuple[Any, types.CodeType | None]] = {}
"""(module, file) -> its spec and code, read and compiled once by a batch's process (none of the code runs there)."""
LIVE_OUTPUT_BYTES = 1_000_000
"""How much of a shell command's output is copied out live; after it the person sees the rest with the result."""
PIPELINE_STARTUP = (
    "unset BASH_ENV; exec %d<&-\n"
    "trap '_tuiagent_p=(\"${PIPESTATUS[@]}\"); echo \"${_tuiagent_p[*]}\" >&%d' EXIT\n"
)
"""bash's startup file (BASH_ENV, read from a pipe whose descriptor is the first number) for a shell command's shell:
on exit it reports the exit status of each command of the last pipeline the command ran on the second descriptor, a
pipe; the command itself is passed to the shell untouched."""


class McpToolError(Exception):
    """The MCP tool (or the runtime) answered with an error."""


def read_line(fd: int) -> dict[str, Any] | None:
    """The JSON object of the next line on `fd`; None when it closed first or the line is not one."""
    data = b""
    while not data.endswith(b"\n") and (chunk := os.read(fd, 65536)):
        data += chunk
    line: dict[str, Any] | None = guard.decoded(data)
    return line


class ToolFinder:
    """Imports each named tool from the exact file given (the catalog's last good copy), not from `.agent/tools/`;
    placed before the path finder (as a sys.path entry would be), after built-in and frozen modules."""

    def __init__(self, paths: dict[str, str]) -> None:
        self.paths = paths
        finders = sys.meta_path
        finders.insert(next((i for i, f in enumerate(finders) if f is importlib.machinery.PathFinder), len(finders)), self)

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        file = self.paths.get(fullname)
        return None if file is None else importlib.util.spec_from_file_location(fullname, file)


def mcp_tool(name: str, doc: str, channel: int, lock: Any) -> types.ModuleType:
    """The module `import mcp__server__tool` gives: a function of the same name that asks the runtime over the
    channel, one call at a time (`lock`), and McpToolError."""

    def call(**arguments: Any) -> Any:
        with lock:
            guard.send(channel, {"bridge": {"tool": name, "arguments": arguments}})
            answer = read_line(channel)
        if answer is None or not answer.get("ok"):
            raise McpToolError("the runtime closed the channel" if answer is None
                               else answer.get("error", "the MCP call failed"))
        return answer.get("value")

    call.__name__ = call.__qualname__ = name
    call.__doc__ = doc
    module = types.ModuleType(name, doc)
    module.McpToolError = McpToolError  # type: ignore[attr-defined]
    setattr(module, name, call)
    return module


class RunFiles:
    """A request's files: its tools made importable (its MCP tools too: `mcp_tool`), its own files (the snippet, the
    named tool files, any `.py` in the tool folders), whose frames a traceback keeps, and an audit hook recording the
    project's other files opened for reading while `active` (bookkeeping, not security)."""

    def __init__(self, request: dict[str, Any], channel: int, project: str) -> None:
        tool_dirs: list[str] = [d for d in request.get("tool_dirs", []) if os.path.isdir(d)]
        tools = ToolFinder(request.get("tool_paths") or {})
        if request.get("bridge_tools"):  # importable as they are: already in sys.modules
            import threading  # only a snippet offered MCP tools pays for it

            lock = threading.Lock()
            sys.modules.update({name: mcp_tool(name, doc, channel, lock) for name, doc in request["bridge_tools"].items()})
        self.own_files = {SNIPPET_NAME, *map(os.path.realpath, [*request.get("own_files", []), *tools.paths.values()])}
        sys.path[:0] = tool_dirs
        self.project = os.path.realpath(project)
        self.tool_dirs = {os.path.realpath(folder) for folder in tool_dirs}
        self.paths: set[str] = set()
        self.active = False
        sys.addaudithook(self.hook)

    def is_own(self, filename: str) -> bool:
        """Checked per frame, so a run never lists a catalog of a thousand tools up front."""
        real = os.path.realpath(filename)
        return filename in self.own_files or real in self.own_files or (
            real.endswith(".py") and os.path.dirname(real) in self.tool_dirs)

    def during(self, value_of: Callable[[], Any]) -> Any:
        """`value_of()`, recording the files it reads."""
        self.active = True
        try:
            return value_of()
        finally:
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
        full = os.path.realpath(os.fsdecode(path))  # nothing here opens a file: the hook is not entered again
        if full.startswith(self.project + os.sep) and full not in self.own_files:  # nor in a tool folder
            if not any(full.startswith(folder + os.sep) for folder in self.tool_dirs) and os.path.isfile(full):
                self.paths.add(os.path.relpath(full, self.project).replace(os.sep, "/"))


def encode_value(value: Any) -> tuple[Any, bool]:
    """The value as the answer carries it, and whether that is its text instead (its repr when it is no JSON; its
    text cut at VALUE_LIMIT characters when it is longer)."""
    try:
        text, what = json.dumps(value, allow_nan=False), "value"
    except (TypeError, ValueError, RecursionError):
        try:
            text, what = repr(value), "repr"
        except Exception as exc:  # a hostile __repr__
            text, what = f"<unrepresentable {type(value).__name__}: {type(exc).__name__}>", "repr"
    if len(text) > VALUE_LIMIT:
        return text[:VALUE_LIMIT] + f"... [{what} cut at {VALUE_LIMIT} characters]", True
    return (value, False) if what == "value" else (text, True)


def answer_of(value_of: Callable[[], Any], files: RunFiles) -> dict[str, Any]:
    """The answer for `value_of()`: its value, what it raised (the traceback of the run's own files' frames only), or,
    after `sys.exit`, ok on status 0 and its `exit_status`."""
    try:
        value, is_repr = encode_value(value_of())
        return {"ok": True, "value": value, "value_is_repr": is_repr}
    except SystemExit as exc:
        code = exc.code
        if code is not None and not isinstance(code, int):
            print(code, file=sys.stderr)
        status = code if isinstance(code, int) else (0 if code is None else 1)
        failed = {"error": f"SystemExit: {code}", "error_kind": "exception"} if status else {}
        return {"ok": not status, "value": None, "value_is_repr": False, "exit_status": status, **failed}
    except BaseException as exc:  # everything the code raises is reported, never re-raised
        kind = "limit" if isinstance(exc, MemoryError) or (isinstance(exc, OSError) and exc.errno == 27) else "exception"
        try:
            frames = [frame for frame in traceback.extract_tb(exc.__traceback__) if files.is_own(frame.filename)]
            message = "".join(traceback.format_exception_only(type(exc), exc))
            if frames:
                message = "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames)) + message
        except BaseException:
            message = f"{type(exc).__name__} (its message could not be formatted)"
        return {"ok": False, "value": None, "value_is_repr": False, "error": message, "error_kind": kind}


def finish_value(value: Any) -> Any:
    if isinstance(value, types.CoroutineType):
        import asyncio

        return asyncio.run(value)
    return value


def load_file_module(name: str, path: str, *, register: bool = True) -> types.ModuleType:
    """The module in the file at `path`, named `name` (in `sys.modules` unless not `register`); its code as the
    batch's process compiled it (`compile_module_files`) when it did."""
    spec, code = COMPILED.get((name, path)) or (importlib.util.spec_from_file_location(name, path), None)
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


def compile_module_files(calls: list[Any]) -> None:
    """Into COMPILED: the spec and code of each distinct (module, file) of a batch's calls, read and compiled by the
    batch's process (no code of the file runs there): each child runs its module from the top, as a run of its own
    would, without reading and compiling it again. A file that cannot be read or compiled is left to each call."""
    for key in {(call["module"], str(call["module_path"])) for call in calls if call.get("module_path")}:
        spec = importlib.util.spec_from_file_location(*key)
        if spec is not None and isinstance(spec.loader, importlib.machinery.SourceFileLoader):
            with contextlib.suppress(ImportError, OSError, SyntaxError, ValueError, RecursionError, MemoryError):
                COMPILED[key] = (spec, spec.loader.get_code(key[0]))


def load_module(name: str, package_parent: str, path: str | None = None) -> types.ModuleType:
    """The module `name` from the file at `path`, else imported; a `tui_agent.*` module is loaded from its file alone,
    without the package's __init__ chain."""
    if path is None and name.startswith("tui_agent."):
        path = os.path.join(package_parent, *name.split(".")) + ".py"
    return importlib.import_module(name) if path is None else load_file_module(name, path)


def load_sibling(filename: str) -> types.ModuleType:
    """A helper module next to this script, loaded by path and kept out of `sys.modules`, where agent code would find
    it by name."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), filename)
    return load_file_module(f"_tuiagent_{filename[:-3]}", path, register=False)


guard = load_sibling("worker_guard.py")
"""What bounds this process and its children (limits, seccomp, output kept, children watched and killed)."""


def run_call(request: dict[str, Any], package_parent: str) -> Any:
    module = load_module(request["module"], package_parent, request.get("module_path") or None)
    return finish_value(getattr(module, request["function"])(**request.get("kwargs", {})))


def run_batch(request: dict[str, Any], package_parent: str, files: RunFiles) -> list[dict[str, Any]]:
    """Op "call_each": each call (one module's function with each kwargs, or each call's own module file, function
    and kwargs, whose answer lists the files it read) in its own forked child (`fanout.call_each`), the private
    folders (`private=` arguments) emptied after each."""
    files.active = False  # on only while a call of a reply's batch runs (in its child): it reports what it read
    shared = request.get("module")
    if shared:  # imported once, before the calls' children fork
        function = getattr(load_module(shared, package_parent), request["function"])
    else:
        compile_module_files(request["calls"])

    def answer(call: Any) -> dict[str, Any]:
        if shared:
            return answer_of(lambda: finish_value(function(**call)), files)
        return {**answer_of(lambda: files.during(lambda: run_call(call, package_parent)), files),
                "files_read": sorted(files.paths)}

    answers: list[dict[str, Any]] = load_sibling("fanout.py").call_each(
        list(request["calls"]), answer, guard=guard, timeout_s=float(request["call_timeout_s"]),
        scratch=[argument[len("private="):] for argument in sys.argv[4:] if argument.startswith("private=")])
    return answers


def run_source(code: str, path: str | None = None) -> Any:
    """Run a snippet, whose last statement's value (when it is an expression) is the result, or, given its `path`, a
    script's text as `__main__` (the text comes over the channel: the file may be outside the sandbox's view)."""
    name = path or SNIPPET_NAME
    linecache.cache[name] = (len(code), None, code.splitlines(keepends=True), name)
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    if path is not None:
        sys.argv = [path]
        namespace["__file__"] = path
    tree = ast.parse(code, name, "exec")
    final = tree.body[-1] if tree.body and path is None else None
    if isinstance(final, ast.Expr):
        tree.body.pop()
    exec(compile(tree, name, "exec"), namespace)
    if not isinstance(final, ast.Expr):
        return None
    return finish_value(eval(compile(ast.Expression(final.value), name, "eval"), namespace))


def run_shell(request: dict[str, Any]) -> dict[str, Any]:
    """Run the command as `bash -c COMMAND` (`/bin/sh -c` without bash) in a process group of its own; the report: exit
    code or signal (or timed out), each stream's kept text and size, and, with bash, the exit status of each command
    of its last pipeline. A command that timed out, and what it left running, are killed before the answer (`main`)."""
    timeout_s, keep_bytes, command = float(request["command_timeout_s"]), int(request["keep_bytes"]), request["command"]
    out_bytes, err_bytes, live = keep_bytes * 2 // 3, keep_bytes // 3, [LIVE_OUTPUT_BYTES]
    stdout = guard.Kept(out_bytes * 2 // 3, out_bytes // 3, live)  # two thirds head, one third tail
    stderr = guard.Kept(err_bytes * 2 // 3, err_bytes // 3, live)
    (out_r, out_w), (err_r, err_w), (startup_r, startup_w), (status_r, status_w) = (os.pipe() for _pipe in range(4))
    guard.write_all(startup_w, (PIPELINE_STARTUP % (startup_r, status_w)).encode())
    for fd in (startup_r, status_w):
        os.set_inheritable(fd, True)
    streams = [(os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0), (os.POSIX_SPAWN_DUP2, out_w, 1),
               (os.POSIX_SPAWN_DUP2, err_w, 2)]
    defaults = (signal.SIGPIPE, signal.SIGXFSZ)  # which this interpreter ignores, as Popen restores them
    bash = True
    try:
        shell = os.posix_spawnp("bash", ["bash", "-c", command], {**os.environ, "BASH_ENV": f"/dev/fd/{startup_r}"},
                                file_actions=streams, setpgroup=0, setsigdef=defaults)
    except (FileNotFoundError, PermissionError):  # no bash it may run
        bash = False
        shell = os.posix_spawn("/bin/sh", ["/bin/sh", "-c", command], os.environ, file_actions=streams, setpgroup=0,
                               setsigdef=defaults)
    finally:
        for fd in (out_w, err_w, startup_r, startup_w, status_w):
            os.close(fd)
    status = guard.watch_child(shell, {out_r: stdout.add, err_r: stderr.add}, time.monotonic() + timeout_s)
    report = shell_report(stdout, stderr, None if status is None else os.waitstatus_to_exitcode(status), timeout_s)
    os.set_blocking(status_r, False)  # what the command left running may hold it open
    try:
        report["pipeline"] = [int(part) for part in os.read(status_r, 4096).split()] if bash else None
    except (OSError, ValueError):
        report["pipeline"] = None
    for fd in (out_r, err_r, status_r):
        os.close(fd)
    return report


def shell_report(stdout: Kept, stderr: Kept, exit_code: int | None, timeout_s: float) -> dict[str, Any]:
    """A shell command's report; `exit_code` None when it timed out, negative when a signal killed it."""
    report: dict[str, Any] = {"exit_code": None, "signal": None, "timed_out": exit_code is None, "cut_bytes": 0}
    for name, kept in (("stdout", stdout), ("stderr", stderr)):
        report[name], cut = kept.text(name)
        report[f"{name}_bytes"] = kept.total
        report["cut_bytes"] += cut
    if exit_code is None:
        report["stderr"] += f"timed out after {timeout_s:g}s"
    elif exit_code < 0:
        report["signal"] = next((each.name for each in signal.Signals if each == -exit_code), f"signal {-exit_code}")
    else:
        report["exit_code"] = exit_code
    return report


def hand_over_listener(argument: str) -> None:
    """For a `net=FD:PORT` argument: listen on 127.0.0.1:PORT of this network namespace, pass the socket over FD to the
    host, which serves it (core/network/proxy.py says why no relay runs inside), and keep no copy of either."""
    fd, _, port = argument[len("net="):].partition(":")
    channel = _socket.socket(fileno=int(fd))
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
    try:
        listener.setsockopt(_socket.SOL_SOCKET, _socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", int(port)))
        listener.listen(128)
        channel.sendmsg([b"L"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, listener.fileno().to_bytes(4, sys.byteorder))])
    finally:
        listener.close()
        channel.close()


def main() -> None:
    """Serve the one request on the channel: limits and seccomp first, then the code; the process exits at the end.

    argv: the channel's descriptor, the project, the folder holding `tui_agent`, then `net=FD:PORT` (a network grant's
    listener) and `private=FOLDER` for each private tmpfs folder a batch empties between its calls."""
    channel, project, package_parent = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    os.set_inheritable(channel, False)  # passed to this process only: nothing it executes gets it
    for argument in sys.argv[4:]:  # before any agent code runs, and before BOOTED
        if argument.startswith("net="):
            hand_over_listener(argument)
    os.write(channel, BOOTED)  # the sandbox started: what fails after this is the run's, not bubblewrap's
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]
    request = read_line(channel)
    if request is None:
        os._exit(3)
    files = RunFiles(request, channel, project)
    # it adopts and kills its descendants: they could hold its output pipes open past its exit (weak tier), and a
    # batch ends each call's before the next
    guard.become_subreaper()
    if request["op"] == "call_each":  # before the filter refuses it: no call's code can write the batch's memory
        guard.make_undumpable()
    guard.drop_capabilities()
    guard.apply_rlimits(request["policy"])
    guard.install_seccomp(request.get("seccomp"))
    worker_pid = os.getpid()
    response = answer_of(lambda: files.during(lambda: run_op(request, package_parent, files)), files)
    exit_status = response.setdefault("exit_status", 0 if response["ok"] else 1)
    if os.getpid() != worker_pid:
        os._exit(exit_status)  # a fork of the code fell through to here: only the worker itself answers
    response["files_read"] = sorted(files.paths)
    guard.kill_descendants()  # what it left running, a timed-out shell command with it (`sleep 1000 &` too)
    guard.send(channel, response)
    os._exit(exit_status)


def run_op(request: dict[str, Any], package_parent: str, files: RunFiles) -> Any:
    """The value of the request's operation: a call, a snippet, a script, a shell command, or a batch of calls."""
    op = request["op"]
    if op == "shell":
        return run_shell(request)
    if op == "call":
        return run_call(request, package_parent)
    if op in ("exec", "script"):
        return run_source(request["code"], request["path"] if op == "script" else None)
    if op == "call_each":
        return run_batch(request, package_parent, files)
    raise ValueError(f"unknown op {op!r}")


if __name__ == "__main__":
    main()
