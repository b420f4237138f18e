"""Turning a worker's raw outcome (response, output, exit status) into the RunResult the model and the user see, and
saying why a writable run's write failed with "Read-only file system" (or "Device or resource busy": a rename over a
read-only bind): the protected path its output names, and why it is read-only, in one line both see
(`refused_writes`)."""

from __future__ import annotations

import dataclasses
import re
import signal
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from tui_agent.core.sandbox import protected
from tui_agent.core.sandbox.protected import GIT, GIT_READ_ONLY, REFUSED
from tui_agent.core.sandbox.policy import (
    ERROR_CANCELLED,
    ERROR_LIMIT,
    ERROR_SANDBOX,
    ERROR_TIMEOUT,
    TIER_BUBBLEWRAP,
    RunResult,
    SandboxPolicy,
)
from tui_agent.core.sandbox.process import Outcome

STDERR_TAIL = 2000
BWRAP_FIX = ("How to fix: check that `bwrap --unshare-pid --ro-bind / / true` works for this user (unprivileged "
             "user namespaces may be off: sysctl kernel.unprivileged_userns_clone=1, or on Ubuntu 24.04+ "
             "kernel.apparmor_restrict_unprivileged_userns=0 or an AppArmor profile for bwrap), or run with "
             "`--sandbox-tier rlimits` (`--tier rlimits` for `tuiagent sandbox run`): resource limits only, "
             "no filesystem isolation")


def output_text(data: bytes, total: int, cap: int, stream: str) -> tuple[str, bool]:
    text = data.decode("utf-8", errors="replace")
    if total <= cap:
        return text, False
    return text + f"\n[{stream} cut: showed the first {cap} of {total} bytes]\n", True


def death_signal(exit_code: int | None, tier: str) -> int | None:
    if exit_code is None:
        return None
    if exit_code < 0:
        return -exit_code
    if tier == TIER_BUBBLEWRAP and exit_code > 128:
        return exit_code - 128
    return None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def failure(outcome: Outcome, policy: SandboxPolicy, tier: str, stderr: str) -> tuple[str, str]:
    """(error_kind, message) for a run that produced no result of its own."""
    if outcome.cancelled:
        return ERROR_CANCELLED, "cancelled: the run's process tree was killed"
    if outcome.timed_out:
        return ERROR_TIMEOUT, f"timed out after {policy.timeout_s:g} s: the run's process tree was killed"
    if outcome.flooded:
        return ERROR_LIMIT, "output flood: the run wrote far beyond the output cap and was killed"
    if outcome.start_failed:
        return ERROR_SANDBOX, start_failure_message(outcome, tier, stderr)
    if outcome.protocol_error:
        return ERROR_SANDBOX, outcome.protocol_error
    number = death_signal(outcome.exit_code, tier)
    tail = stderr[-STDERR_TAIL:].strip()
    detail = f"\n{tail}" if tail else ""
    if number == signal.SIGXCPU:
        return ERROR_LIMIT, f"CPU time limit of {policy.cpu_s} s exceeded{detail}"
    if number == signal.SIGKILL:
        return ERROR_LIMIT, f"killed by SIGKILL (CPU hard limit or memory exhaustion){detail}"
    if number is not None:
        return ERROR_SANDBOX, f"the sandboxed process died from {_signal_name(number)} without a result{detail}"
    return ERROR_SANDBOX, f"the sandboxed process exited with status {outcome.exit_code} without a result{detail}"


def start_failure_message(outcome: Outcome, tier: str, stderr: str) -> str:
    """What failed when the sandbox exited before its interpreter started, its own words, and how to fix it."""
    said = stderr[-STDERR_TAIL:].strip() or "(nothing on stderr)"
    status = f" (exit status {outcome.exit_code})" if outcome.exit_code is not None else ""
    if tier == TIER_BUBBLEWRAP:
        return f"the bubblewrap sandbox could not start{status}; bwrap said: {said}\n{BWRAP_FIX}"
    return (f"the sandboxed interpreter could not start{status}: {said}\n"
            "How to fix: check that this Python can start (`python -I -c pass`) and that the project folder is readable")


def to_run_result(outcome: Outcome, policy: SandboxPolicy, tier: str) -> RunResult:
    stdout, out_cut = output_text(outcome.stdout, outcome.stdout_total, policy.output_bytes, "stdout")
    stderr, err_cut = output_text(outcome.stderr, outcome.stderr_total, policy.output_bytes, "stderr")
    response = outcome.response
    interrupted = outcome.cancelled or outcome.timed_out or outcome.flooded
    if response is None or interrupted or "ok" not in response:
        kind, message = failure(outcome, policy, tier, stderr)
        return RunResult(
            ok=False, value=None, value_is_repr=False, error=message, error_kind=kind,
            stdout=stdout, stderr=stderr, output_truncated=out_cut or err_cut,
            duration_ms=outcome.duration_ms, files_read=(), tier=tier, exit_code=outcome.exit_code,
        )
    files = response.get("files_read") or []
    return RunResult(
        ok=bool(response.get("ok")),
        value=response.get("value"),
        value_is_repr=bool(response.get("value_is_repr")),
        error=response.get("error"),
        error_kind=response.get("error_kind"),
        stdout=stdout,
        stderr=stderr,
        output_truncated=out_cut or err_cut,
        duration_ms=outcome.duration_ms,
        files_read=tuple(str(f) for f in files if isinstance(f, str)),
        tier=tier,
        exit_code=outcome.exit_code,
    )


def answer_result(answer: dict[str, Any], tier: str) -> RunResult:
    """One call's answer from a `call_each` run as a RunResult."""
    return RunResult(
        ok=bool(answer.get("ok")), value=answer.get("value"), value_is_repr=bool(answer.get("value_is_repr")),
        error=answer.get("error") if isinstance(answer.get("error"), str) else None,
        error_kind=answer.get("error_kind") if isinstance(answer.get("error_kind"), str) else None,
        stdout=str(answer.get("stdout", "")), stderr=str(answer.get("stderr", "")), output_truncated=False,
        duration_ms=float(answer.get("duration_ms") or 0.0),
        files_read=tuple(str(f) for f in answer.get("files_read") or () if isinstance(f, str)), tier=tier,
        exit_code=answer.get("exit_code") if isinstance(answer.get("exit_code"), int) else None,
    )


def with_notes(result: RunResult, notes: list[str]) -> RunResult:
    """The result with tuiagent's notes about the run (quarantined paths, ignored files, kept files) on its stderr."""
    if not notes:
        return result
    return dataclasses.replace(result, stderr=result.stderr + "".join(f"[tuiagent] {note}\n" for note in notes))


WEAK_TIER_NETWORK = ("refused, nothing was run: a network grant needs the bubblewrap tier. The rlimits tier has no "
                     "network namespace, so a run given the network would reach services on this machine's loopback "
                     "(127.0.0.1, ::1) and its LAN directly, past the proxy that limits a grant to public host names. "
                     "Run it without the network, or make bubblewrap work here (`tuiagent sandbox status` says why "
                     "it does not)")


def network_refused(tier: str) -> RunResult:
    """The result of a run granted the network on a tier that cannot keep it off this machine."""
    return RunResult(ok=False, value=None, value_is_repr=False, error=WEAK_TIER_NETWORK, error_kind=ERROR_SANDBOX,
                     stdout="", stderr="", output_truncated=False, duration_ms=0.0, files_read=(), tier=tier,
                     exit_code=None)


REFUSALS = ("read-only file system", "device or resource busy")
"""How a write to a read-only bind fails: in place, or by renaming a new version over it (git's lock files)."""
MAX_NOTES = 5

_WHY_GIT_INSIDE = ("git's config, hooks and info/ decide what git runs on your machine: they stay read-only even for "
                   "an approved run (the rest of .git, what a commit needs, is writable)")
_WHY_GIT = ("git's folder is read-only for this run: only a run whose writes go through an overlay (see `tuiagent "
            "sandbox status`) may commit, and then never change .git/config, hooks or info/")
_WHY = "a protected path (it decides what runs on your machine, or is tuiagent's own): read-only for agent code"


def refused_writes(root: Path, texts: Iterable[str], *, git_commits: bool) -> list[str]:
    """One note per protected path a line of `texts` saying one of REFUSALS names; `git_commits`: the run could
    write what commits need in `.git`."""
    lines = [line for text in texts if text for line in text.splitlines()
             if any(refusal in line.lower() for refusal in REFUSALS)]
    if not lines:  # the usual run: no protected path to list
        return []
    entries = sorted({*protected.protected_paths(root), *(f"{GIT}/{name}" for name in GIT_READ_ONLY)},
                     key=len, reverse=True)
    notes: list[str] = []
    for line in lines:
        entry = _named(line, entries, str(root))
        note = f"{REFUSED}writing {entry} ({_why(entry, git_commits)})" if entry is not None else None
        if note is not None and note not in notes:
            notes.append(note)
    return notes[:MAX_NOTES]


def _named(line: str, entries: list[str], root: str) -> str | None:
    """The longest protected entry `line` names as a path (relative, or under the project's absolute path)."""
    text = line.replace(root.rstrip("/") + "/", "")
    for entry in entries:
        if re.search(rf"(^|[\s'\"`(:=./]){re.escape(entry)}($|[\s'\"`):/,])", text):
            return entry
    return None


def _why(entry: str, git_commits: bool) -> str:
    if entry.startswith(GIT + "/"):
        return _WHY_GIT_INSIDE if git_commits else _WHY_GIT
    if entry == GIT:
        return _WHY_GIT
    return _WHY


def run_texts(result: RunResult) -> list[str]:
    """What a run said: its output and error, and a shell command's own output (run_shell's report)."""
    texts = [result.stdout, result.stderr, result.error or ""]
    if isinstance(result.value, dict):
        texts += [str(result.value.get(name, "")) for name in ("stdout", "stderr")]
    return texts
