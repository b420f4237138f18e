"""How the CLI starts the TUI: its flags as launch options, the app built from them, and the run until the person quits."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tui_agent.ui.app import TuiAgentApp
from tui_agent.ui.runtime_bridge import LaunchOptions

if TYPE_CHECKING:
    from tui_agent.core.protocols import Model


def launch_options(args: argparse.Namespace, client: Model | None = None) -> LaunchOptions:
    """The runtime-shaping flags the CLI parsed (`tuiagent` without -p); `client` talks to the model in place of the
    Messages API's client (the CLI passes none)."""
    return LaunchOptions(
        client=client,
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


def build_app(args: argparse.Namespace, *, client: Model | None = None, **overrides: Any) -> TuiAgentApp:
    """The app as the CLI builds it (tests use this same factory, some with an in-process `client`)."""
    return TuiAgentApp(Path(args.project or "."), options=launch_options(args, client), **overrides)


def run_tui(args: argparse.Namespace) -> int:
    """Run the TUI until the person quits; the exit code for the CLI."""
    app = build_app(args)
    result = app.run()
    print(app.lifecycle.farewell())
    return int(result or 0)


