"""The execution built-ins: run_shell (a command in the sandbox, with approval) and run_python (code-as-harness, read-only)."""

from __future__ import annotations

import json

from tui_agent.core.agent.command_view import one_line
from tui_agent.core.agent.git_readonly import read_only_git
from tui_agent.core.agent.permissions import ApprovalRequest
from tui_agent.core.agent.shell_run import live_listener, report_text
from tui_agent.core.agent.toolbase import BuiltinTool, ToolContext, ToolFailure, ToolOutput, optional_int, require_str, schema, truncate
from tui_agent.core.protocols import AgentSandbox
from tui_agent.core.hostnames import describe_grant
from tui_agent.core.sandbox import TIER_BUBBLEWRAP, NetworkGrant, RunResult, SandboxPolicy, ShellCommand, Snippet
from tui_agent.core.content import JsonObject

DEFAULT_SHELL_TIMEOUT_S = 120
MAX_SHELL_TIMEOUT_S = 600
SHELL_OUTPUT_BYTES = 30_000
"""How much of a command's output the model reads: the first and last bytes of it, with how much was cut between."""
SUMMARY_LIMIT = 300
"""How much of a command (in its visible one-line form) an approval title or a denial message shows before saying what it cut."""


def format_run_result(result: RunResult) -> ToolOutput:
    """A sandbox RunResult as the text the model reads: the value, the output, or the trimmed error."""
    parts: list[str] = []
    if result.ok:
        if result.value is not None:
            parts.append(result.value if result.value_is_repr or isinstance(result.value, str) else json.dumps(result.value, indent=1, default=str))
    else:
        parts.append(f"error ({result.error_kind}): {result.error}")
    if result.stdout:
        parts.append(f"[stdout]\n{result.stdout}")
    if result.stderr:
        parts.append(f"[stderr]\n{result.stderr}")
    if result.output_truncated:
        parts.append("[the output was truncated by the sandbox]")
    text, truncated = truncate("\n".join(parts) if parts else "(no value, no output)")
    return ToolOutput(text, is_error=not result.ok, truncated=truncated or bool(result.output_truncated))


def _sandbox(ctx: ToolContext) -> AgentSandbox:
    if ctx.sandbox is None:
        raise ToolFailure("the sandbox is not available in this session")
    return ctx.sandbox


def shell_summary(command: str, network: NetworkGrant, changes_venv: bool = False) -> str:
    """The approval's one-line summary: the whole command (lines joined, padding and control characters visible),
    how many lines it has, what it may reach, and what is cut if it is very long; a denial message repeats it."""
    lines = command.count("\n") + 1
    size = f" ({lines} lines)" if lines > 1 else ""
    access = f"WITH NETWORK ACCESS ({describe_grant(network)})" if network else "(no network)"
    venv = " AND IT MAY CHANGE THE PROJECT'S VIRTUALENV (install packages)" if changes_venv else ""
    return f"run `{one_line(command, SUMMARY_LIMIT)}`{size} {access}{venv}"


async def run_shell(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    command = require_str(args, "command")
    timeout = optional_int(args, "timeout", DEFAULT_SHELL_TIMEOUT_S) or DEFAULT_SHELL_TIMEOUT_S
    if not 1 <= timeout <= MAX_SHELL_TIMEOUT_S:
        raise ToolFailure(f"`timeout` must be between 1 and {MAX_SHELL_TIMEOUT_S} seconds")
    network = args.get("network", False)
    if not isinstance(network, bool):
        raise ToolFailure("`network` must be true or false")
    changes_venv = args.get("changes_venv", False)
    if not isinstance(changes_venv, bool):
        raise ToolFailure("`changes_venv` must be true or false")
    sandbox = _sandbox(ctx)
    grant: NetworkGrant = sandbox.network_grant() if network else False
    notes = tuple(sandbox.program_notes(command))
    summary = shell_summary(command, grant, changes_venv) + "".join(f"; {note}" for note in notes)  # headless too
    # A call that may change the virtualenv is its own approval: no command rule covers it, only the tool-wide one.
    request = ApprovalRequest("network" if network else "shell", "run_shell", summary, command,
                              subject=None if changes_venv else command, notes=notes)
    # a git command that only reads runs unasked, with the project read-only: only bubblewrap can make it so
    reading_git = read_only_git(command) and not network and not changes_venv and sandbox.tier == TIER_BUBBLEWRAP
    if not reading_git or ctx.permissions.read_only:
        await ctx.require_approval(request)
    policy = SandboxPolicy(timeout_s=float(timeout + 10), cpu_s=timeout + 10, output_bytes=200_000, network=grant,
                           venv_writable=changes_venv, project_writable=not reading_git)
    listener = live_listener(ctx.call_id, ctx.live) if ctx.live is not None else None
    result = await sandbox.run(ShellCommand(command, timeout, keep_bytes=SHELL_OUTPUT_BYTES), policy, on_output=listener)
    if not result.ok or not isinstance(result.value, dict):
        return format_run_result(result)
    text, failed = report_text(result.value)
    return ToolOutput(text, is_error=failed, truncated=bool(result.value.get("cut_bytes")))


async def run_python(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    """Code-as-harness: cheap in every mode because the project is read-only for the snippet, except in `auto`
    mode (edits accepted) where it may write. Where the sandbox cannot make the project read-only (rlimits
    tier), the snippet could write anyway, so it asks (or is refused) like a shell command."""
    code = require_str(args, "code")
    network = args.get("network", False)
    if not isinstance(network, bool):
        raise ToolFailure("`network` must be true or false")
    sandbox = _sandbox(ctx)
    writable = ctx.permissions.mode == "auto"
    enforced = sandbox.tier == TIER_BUBBLEWRAP
    grant: NetworkGrant = sandbox.network_grant() if network else False
    if network:  # its own approval, whatever the mode: the snippet may reach the network
        await ctx.require_approval(ApprovalRequest(
            "network", "run_python", f"run a Python snippet WITH NETWORK ACCESS ({describe_grant(grant)})", code))
    elif not writable and not enforced:
        await ctx.require_approval(ApprovalRequest(
            "shell", "run_python", f"run a Python snippet (the {sandbox.tier} sandbox cannot keep "
                                   "project files read-only)", code))
    if ctx.catalog is not None:  # tools import at their last good version
        result = await ctx.catalog.run_python(code, allow_writes=writable, policy=sandbox.policy.with_(network=grant))
    else:
        result = await sandbox.run(Snippet(code), sandbox.policy.with_(project_writable=writable, network=grant))
    output = format_run_result(result)
    if not writable and not result.ok and "Read-only file system" in (result.error or "") + result.stderr:
        note = ("\n[the project is read-only for run_python in this permission mode: change files with "
                "write_file/edit_file, or call a catalog tool that declares WRITES = True]")
        return ToolOutput(output.text + note, is_error=True, truncated=output.truncated)
    return output


EXEC_TOOLS: tuple[BuiltinTool, ...] = (
    BuiltinTool(
        "run_shell",
        "Run a shell command in the project folder inside the sandbox, with the project's toolchain (its virtualenv, "
        "the user's PATH) and resource limits. The network is off unless you pass network: true (the user is told); the "
        "project's virtualenv is read-only unless you pass changes_venv: true (the user is told). "
        "Returns the exit code and output. May need the user's approval.",
        schema({"command": {"type": "string"}, "timeout": {"type": "integer", "minimum": 1, "maximum": MAX_SHELL_TIMEOUT_S, "description": "seconds (default 120)"},
                "network": {"type": "boolean", "description": "allow network access for this command (default false): "
                            "HTTP(S) and SOCKS5 through a proxy to public host names (the names `[sandbox] network` "
                            "lists, when set), never this machine or its LAN"},
                "changes_venv": {"type": "boolean", "description": "the command installs or removes packages in the "
                                 "project's virtualenv, which is otherwise read-only (default false; the user is told)"}},
               ["command"]),
        run_shell,
    ),
    BuiltinTool(
        "run_python",
        "Run a Python snippet in the sandbox with every catalog tool importable by name (`from find_flaky_recipe_runs import find_flaky_recipe_runs`). "
        "Use it to compose several tools with loops and conditions in one step. The value of the last expression is returned. "
        "The project is read-only for the snippet (except in auto permission mode): change files with write_file/edit_file.",
        schema({"code": {"type": "string"},
                "network": {"type": "boolean", "description": "allow network access for this snippet (default false; "
                            "the user is asked): HTTP(S) through a proxy to public host names (the names `[sandbox] "
                            "network` lists, when set), never this machine or its LAN"}}, ["code"]),
        run_python,
    ),
)
