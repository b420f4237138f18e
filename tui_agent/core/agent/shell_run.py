"""run_shell's sandboxed snippet (the command's output kept for the model and copied out live) and the host-side
decoder that turns the live copy into ToolOutputDelta events."""

from __future__ import annotations

import codecs
from collections.abc import Callable

from tui_agent.core.events import Event, ToolOutputDelta

LIVE_OUTPUT_BYTES = 1_000_000
"""How much of a command's output is copied out live; after it the person sees the rest with the result."""
LIVE_CUT_NOTE = "\n[tuiagent: live output stops here after 1 MB; the rest comes with the result]\n"


PIPELINE_TRAILER = '_tuiagent_p=("${PIPESTATUS[@]}"); echo "${_tuiagent_p[*]}" >&@FD@ 2>/dev/null; exit "${_tuiagent_p[-1]}"'
"""Run after the command (a line of its own) by bash: keeps its exit status and reports, on a pipe (@FD@), the exit
status of each command of the last pipeline it ran."""
SIGPIPE_STATUS = 141
"""A command stopped because what read its output had finished (`yes | head -1`): not a failure."""


def pipeline_failure(report: dict[str, object]) -> str | None:
    """Why a command that exited 0 still failed: a command before the last of its final pipeline failed (`python3 -m
    pytest | tail` exits 0 when pytest is missing); None when nothing did."""
    statuses = report.get("pipeline")
    if report.get("exit_code") != 0 or not isinstance(statuses, list) or len(statuses) < 2:
        return None
    failed = [status for status in statuses[:-1] if isinstance(status, int) and status not in (0, SIGPIPE_STATUS)]
    if not failed:
        return None
    return f"a command of the pipeline failed (its exit statuses: {' '.join(str(s) for s in statuses)})"


def shell_snippet(command: str, timeout_s: int) -> str:
    """Python run inside the sandbox that runs `command` with bash (sh without it) and reports its exit code, output
    and, with bash, the exit status of each command of its last pipeline.

    The output it reports is what `subprocess.run(capture_output=True, text=True)` would give; while the command runs,
    both of its streams are also copied, as they come, to the snippet's own stdout (the first LIVE_OUTPUT_BYTES)."""
    return (
        "import io, os, selectors, shutil, subprocess, time\n"
        "_bash = shutil.which('bash')\n"
        "if _bash:\n"
        "    _status_r, _status_w = os.pipe()\n"
        f"    _script = {command + chr(10)!r} + {PIPELINE_TRAILER!r}.replace('@FD@', str(_status_w))\n"
        "    _proc = subprocess.Popen([_bash, '-c', _script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,\n"
        "                             pass_fds=(_status_w,))\n"
        "    os.close(_status_w)\n"
        "else:\n"
        f"    _proc = subprocess.Popen({command!r}, shell=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)\n"
        "_kept = {_proc.stdout.fileno(): [], _proc.stderr.fileno(): []}\n"
        "_selector = selectors.DefaultSelector()\n"
        "for _fd in _kept:\n"
        "    _selector.register(_fd, selectors.EVENT_READ)\n"
        f"_deadline, _live, _timed_out = time.monotonic() + {timeout_s}, {LIVE_OUTPUT_BYTES}, False\n"
        "def _tee(_data):\n"
        "    _view = memoryview(_data)\n"
        "    while _view:\n"
        "        _view = _view[os.write(1, _view):]\n"
        "while _selector.get_map() and not _timed_out:\n"
        "    _left = _deadline - time.monotonic()\n"
        "    _timed_out = _left <= 0\n"
        "    for _key, _mask in ([] if _timed_out else _selector.select(_left)):\n"
        "        _data = os.read(_key.fd, 65536)\n"
        "        if not _data:\n"
        "            _selector.unregister(_key.fd)\n"
        "            continue\n"
        "        _kept[_key.fd].append(_data)\n"
        "        if _live > 0:\n"
        "            _tee(_data[:_live])\n"
        "            _live -= len(_data)\n"
        "            if _live <= 0:\n"
        f"                _tee({LIVE_CUT_NOTE.encode()!r})\n"
        "if not _timed_out:\n"
        "    try:\n"
        "        _proc.wait(max(0.0, _deadline - time.monotonic()))\n"
        "    except subprocess.TimeoutExpired:\n"
        "        _timed_out = True\n"
        "if _timed_out:\n"
        "    _proc.kill()\n"
        "    _proc.wait()\n"
        "def _text(_fd):\n"
        "    return io.TextIOWrapper(io.BytesIO(b''.join(_kept[_fd])), errors='replace').read()\n"
        "_out, _err = _text(_proc.stdout.fileno()), _text(_proc.stderr.fileno())\n"
        "if _timed_out:\n"
        f"    _report = {{'exit_code': None, 'stdout': _out, 'stderr': 'timed out after {timeout_s}s'}}\n"
        "else:\n"
        "    _report = {'exit_code': _proc.returncode, 'stdout': _out, 'stderr': _err}\n"
        "if _bash:\n"
        "    os.set_blocking(_status_r, False)\n"
        "    try:\n"
        "        _report['pipeline'] = [int(_s) for _s in os.read(_status_r, 4096).split()]\n"
        "    except (OSError, ValueError):\n"
        "        pass\n"
        "_report\n"
    )


def live_listener(call_id: str, show: Callable[[Event], None]) -> Callable[[bytes], None]:
    """A sandbox output listener that hands each decoded chunk to `show` as a ToolOutputDelta of `call_id`."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def listen(chunk: bytes) -> None:
        text = decoder.decode(chunk)
        if text:
            show(ToolOutputDelta(call_id, text))

    return listen
