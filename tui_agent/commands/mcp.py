"""`tuiagent mcp serve` (the live catalog as a stdio MCP server) and `tuiagent mcp list` (the servers this project uses)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

from tui_agent.core.textsafety import escaped, visible_controls
from tui_agent.commands.failures import EXIT_USAGE, Subparsers, report

if TYPE_CHECKING:  # imported where used: every `tuiagent` start registers these commands
    from tui_agent.core.mcp.config import ServerConfig
    from tui_agent.core.mcp.coverage import Coverage
    from tui_agent.core.project import Project


def register(parser: argparse.ArgumentParser, subparsers: Subparsers) -> None:
    mcp = subparsers.add_parser("mcp", help="serve the catalog over MCP, or inspect the MCP servers this project uses")
    actions = mcp.add_subparsers(dest="mcp_command", required=True)
    serve = actions.add_parser("serve", help="serve the catalog's tools to an MCP client over stdio "
                                             "(e.g. `claude mcp add tuiagent -- tuiagent mcp serve`)")
    serve.add_argument("--allow-writes", action="store_true", help="let tools that declare WRITES = True change project files")
    serve.add_argument("--allow-network", action="store_true", help="let tools that declare NETWORK = True use the network")
    serve.add_argument("--allow", action="append", default=[], metavar="TOOL", help="allow this one tool whatever it declares")
    serve.add_argument("--run-python", action="store_true", help="also offer run_python (code over the whole catalog)")
    serve.add_argument("--sandbox-tier", choices=("bubblewrap", "rlimits"), default=None, help=argparse.SUPPRESS)
    serve.set_defaults(handler=handle_serve)
    listing = actions.add_parser("list", help="start the MCP servers of .mcp.json and [mcp.servers], show their status and tools")
    listing.add_argument("--json", action="store_true", help="machine-readable output")
    listing.set_defaults(handler=handle_list)
    trusting = actions.add_parser("trust", help="approve configured MCP servers' exact commands so sessions start them")
    trusting.add_argument("names", nargs="*", metavar="NAME", help="the servers to approve")
    trusting.add_argument("--all", action="store_true", help="approve every configured server")
    trusting.set_defaults(handler=handle_trust)


def handle_serve(args: argparse.Namespace) -> int:
    from tui_agent.core.mcp.config import McpConfigError, load_serve_options
    from tui_agent.core.mcp.server import serve_stdio
    from tui_agent.core.project import ConfigError, Project

    from tui_agent.commands.trustgate import require_trust

    require_trust(args, "tuiagent mcp serve")  # it imports and tests the project's tools, and reads its [mcp.serve] grants
    try:
        options = load_serve_options(Project.at(args.project)).merged(
            allow_writes=args.allow_writes, allow_network=args.allow_network, run_python=args.run_python,
            allowed_tools=args.allow)
    except (McpConfigError, ConfigError) as error:
        print(f"tuiagent mcp serve: {error}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve_stdio(args.project, options, sandbox_tier=args.sandbox_tier))
    except KeyboardInterrupt:
        return 130
    except Exception as error:  # e.g. the sandbox cannot start: say so on stderr (stdout is the protocol)
        print(f"tuiagent mcp serve: {type(error).__name__}: {error}", file=sys.stderr)
        return 1
    return 0



def handle_list(args: argparse.Namespace) -> int:
    from tui_agent.core.project import ConfigError

    try:
        data, text, code = asyncio.run(list_servers(args.project))
    except ConfigError as error:
        return report(f"tuiagent mcp list: {error}", "config", EXIT_USAGE, as_json=args.json)
    print(json.dumps(data, indent=2) if args.json else text)
    return code


async def list_servers(project_root: str) -> tuple[dict[str, Any], str, int]:
    """Start every configured server, list what it offers, stop them; exit code 1 when one failed."""
    from tui_agent.core.mcp.hub import McpHub
    from tui_agent.core.project import Project

    hub = await McpHub.start(Project.at(project_root), wait_s=None)
    try:
        rows = hub.rows()
        data = {"servers": [{"name": row.name, "status": row.status, "error": row.error,
                             "tools": [{"name": t.name, "tool": t.tool, "description": t.description} for t in row.tools]}
                            for row in rows], "problems": hub.problems, "notes": hub.notes()}
        lines = [f"{escaped(row.name)}: {row.status}" + (f" — {shown_error(row.error)}" if row.error else f", {len(row.tools)} tools")
                 for row in rows]
        for row in rows:
            lines.extend(f"  {escaped(tool.name)}  {escaped((tool.description.splitlines() or [''])[0][:80])}" for tool in row.tools)
        lines.extend(f"problem: {escaped(problem)}" for problem in hub.problems)
        lines.extend(f"note: {escaped(note)}" for note in hub.notes())  # a server's own words (its stdout noise)
        text = "\n".join(lines) or "no MCP servers configured (.mcp.json or [mcp.servers.NAME] in .agent/config.toml)"
        return data, text, 1 if hub.failures() else 0
    finally:
        await hub.aclose()


def shown_error(error: str) -> str:
    """A server's error for `mcp list`: its first line escaped, the rest (a changed file's diff) as indented lines
    with every control character but the line breaks made visible."""
    first, *rest = error.split("\n")
    return "".join([escaped(first), *(f"\n    {visible_controls(line)}" for line in rest)])


MAX_LISTED = 20
"""Pinned files listed one by one by `mcp trust` (the rest are counted)."""


def handle_trust(args: argparse.Namespace) -> int:
    """Print each chosen server's command and record it as approved (outside the project, out of the agent's reach)."""
    from tui_agent.core.mcp.config import load_server_configs
    from tui_agent.core.mcp.trust import McpTrustRefused, changed_files, server_coverage, trust, trust_file
    from tui_agent.core.project import ConfigError, Project

    project = Project.at(args.project)
    try:
        configs, problems = load_server_configs(project)
    except ConfigError as error:
        print(f"tuiagent mcp trust: {error}", file=sys.stderr)
        return 2
    for problem in problems:
        print(f"problem: {problem}", file=sys.stderr)
    by_name = {config.name: config for config in configs}
    unknown = [name for name in args.names if name not in by_name]
    if unknown or not (args.names or args.all):
        known = ", ".join(sorted(by_name)) or "none"
        print(f"tuiagent mcp trust: name the servers to approve (configured: {known}), or pass --all"
              + (f"; unknown: {', '.join(unknown)}" if unknown else ""), file=sys.stderr)
        return 2
    chosen = configs if args.all else [by_name[name] for name in args.names]
    changed = {config.name: changed_files(project, config) for config in chosen}
    try:
        trust(project, chosen)
    except McpTrustRefused as error:
        print(one_line(f"tuiagent mcp trust: nothing approved: {error}"), file=sys.stderr)
        return 2
    for config in chosen:
        print(approved_lines(config, server_coverage(config, project.root), changed[config.name]), end="")
    print(f"(recorded in {trust_file()})")
    note = approve_in_project_trust(project, [config.name for config in chosen])
    if note:
        print(note)
    return 0


def approve_in_project_trust(project: Project, names: list[str]) -> str:
    """`mcp trust NAME` is the person's approval of those servers: in a project trusted by content, their grants as
    they are now join what was approved (nothing else does: a pulled rule still asks); what to do otherwise, or ""."""
    from tui_agent.core.trust import trust_file
    from tui_agent.core.trust.grants import mcp_grants

    entry = trust_file.lookup(project.root)
    if entry is None:
        return ("the project itself is not trusted yet: sessions start no server of it until you run `tuiagent trust` "
                "(it lists what the project grants)")
    if entry.approved is None or entry.path != trust_file.real_path(project.root):
        return ""  # a trusted folder: its projects' grants are not pinned, the server approval above is all it takes
    keys = {f"mcp:{name}" for name in names}
    approved = {grant.key: grant.digest for grant in mcp_grants(project) if grant.key in keys}
    trust_file.amend_approved(project.root, lambda current: {**current, **approved})  # locked: a concurrent untrust stays
    return ""


def approved_lines(config: ServerConfig, covered: Coverage, changed: list[str]) -> str:
    """What `mcp trust` approved for one server: its command, what its approval covers, what changed since the last."""
    env = " ".join(f"{key}={value}" for key, value in sorted(config.env.items()))
    lines = [f"approved {config.name}: {config.launch}" + (f"  (env {env})" if env else "")]
    if covered.sources:
        lines.append(f"  covers {covered.summary()}: a change to any of these files asks again")
    lines += [f"  pinned {name} (sha256 {digest[:12]})" for name, digest in covered.files[:MAX_LISTED]]
    if len(covered.files) > MAX_LISTED:
        lines.append(f"  … and {len(covered.files) - MAX_LISTED} more files")
    if changed:
        lines.append(f"  changed since the previous approval: {', '.join(changed)}")
    return "".join(one_line(line) + "\n" for line in lines)


def one_line(text: str) -> str:
    """Project-controlled text (names, commands, file names) as one line with every control character visible."""
    from tui_agent.core.textsafety import visible_controls

    return visible_controls(text.replace("\n", "\u2424"))
