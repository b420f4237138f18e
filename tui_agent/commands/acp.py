"""`tuiagent acp`: an Agent Client Protocol agent on stdin/stdout for editors (Zed, JetBrains, neovim clients...)."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from pathlib import Path

from tui_agent.commands.failures import Subparsers


def register(parser: argparse.ArgumentParser, subparsers: Subparsers) -> None:
    acp = subparsers.add_parser("acp", help="speak the Agent Client Protocol on stdin/stdout (for editors: "
                                            "`tuiagent --project /path/to/repo acp`)")
    acp.add_argument("--mode", dest="acp_mode", choices=("ask", "auto", "read-only", "plan"), default=None,
                     help="the permission mode sessions start in (the client can switch it: session/set_mode)")
    acp.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from tui_agent.acp.agent import AcpOptions
    from tui_agent.acp.serve import serve_stdio

    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="tuiagent acp: %(message)s")
    options = AcpOptions(project=Path(args.project).resolve(), model=getattr(args, "model", None),
                         sandbox_tier=getattr(args, "sandbox_tier", None),
                         trust_project=bool(getattr(args, "trust_project", False)), permission_mode=args.acp_mode)
    try:
        asyncio.run(serve_stdio(options))
    except KeyboardInterrupt:
        return 130
    return 0
