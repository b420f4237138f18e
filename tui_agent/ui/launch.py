"""How the CLI starts the TUI: its flags as launch options, the app built from them, and the run until the person quits."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.runtime_bridge import LaunchOptions


def launch_options(args: argparse.Namespace) -> LaunchOptions:
    """The runtime-shaping flags the CLI parsed (`tuiagent` without -p)."""
    return LaunchOptions(
        model=args.model,
        resume=args.resume,
        continue_latest=bool(args.continue_latest),
        permission_mode=args.permission_mode,
        sandbox_tier=args.sandbox_tier,
        allowed_tools=tuple(args.allow or ()),
        approve_all=bool(args.yes),
        init_git=bool(args.init_git),
        extra={**({"trust_project": True} if args.trust_project else {}),
               **({"thinking": args.thinking} if args.thinking else {}), **({"effort": args.effort} if args.effort else {})},
    )


def build_app(args: argparse.Namespace, **overrides: Any) -> TuiAgentApp:
    """The app as the CLI builds it (tests use this same factory)."""
    return TuiAgentApp(Path(args.project or "."), options=launch_options(args), **overrides)


def run_tui(args: argparse.Namespace) -> int:
    """Run the TUI until the person quits; the exit code for the CLI."""
    app = build_app(args)
    result = app.run()
    print(app.lifecycle.farewell())
    return int(result or 0)


