"""Turning a worker's raw outcome (response, output, exit status) into the RunResult the model and the user see."""

from __future__ import annotations

import dataclasses
import signal
from typing import Any

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
