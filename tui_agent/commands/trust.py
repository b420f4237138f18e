"""`tuiagent trust [--show]` (print what the project grants, then trust it) and `tuiagent untrust`."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict

from tui_agent.commands.failures import Subparsers


def register(parser: argparse.ArgumentParser, subparsers: Subparsers) -> None:
    trust = subparsers.add_parser("trust", help="print what the project grants (permissions, recipes, tools, MCP "
                                                "servers, virtualenv), then trust it")
    trust.add_argument("--show", action="store_true", help="only print what it grants and whether it is trusted")
    trust.add_argument("--json", action="store_true", help="machine-readable output")
    trust.add_argument("--folder", metavar="DIR", help="trust DIR and every project below it, whatever they hold "
                                                       "(no content pin: for a folder of your own repositories)")
    trust.set_defaults(handler=handle_trust)
    untrust = subparsers.add_parser("untrust", help="stop trusting the project (it opens restricted again)")
    untrust.add_argument("--folder", metavar="DIR", help="stop trusting the folder DIR (trusted with --folder)")
    untrust.set_defaults(handler=handle_untrust)


def handle_trust(args: argparse.Namespace) -> int:
    from tui_agent.core.project import Project
    from tui_agent.core.trust import check, describe, grant
    from tui_agent.core.textsafety import escaped
    from tui_agent.core.trust.trust_file import trust_file

    if args.folder:
        from tui_agent.core.trust import trust_folder
        from tui_agent.core.trust.trust_file import real_path

        trust_folder(args.folder)
        print(f"Trusted the folder {real_path(args.folder)} and every project below it; recorded in {trust_file()}.")
        return 0
    project = Project.at(args.project)
    before, description = check(project), describe(project)
    after = before if args.show or before.trusted else grant(project)
    if args.json:
        print(json.dumps({"root": description.root, "trusted": after.trusted, "state": after.state,
                          "changed": list(before.changed), "folder": before.folder,
                          "grants": [asdict(item) for item in description.grants],
                          "sections": dict(description.sections())}, indent=2))
        return 0
    print(description.text())
    print()
    if args.show or before.trusted or before.changed:
        print(_status_line(before))
    for change in before.changed:
        print(f"  {escaped(change)}")
    if args.show:
        if not before.trusted:
            print("Run `tuiagent trust` to trust it with exactly these grants.")
        return 0
    if not before.trusted:
        print(f"Trusted {escaped(description.root)} with exactly these grants; recorded in {trust_file()}. "
              "A change to them (a pull) makes it ask again.")
    return 0


def _status_line(status: object) -> str:
    from tui_agent.core.trust import TrustStatus

    assert isinstance(status, TrustStatus)
    if status.state == "folder":
        return f"Trusted: it lies in the trusted folder {status.folder}."
    if status.state == "trusted":
        return "Trusted, with exactly these grants."
    if status.state == "changed":
        return "Restricted: its grants changed since you trusted it:"
    return "Restricted: not trusted yet."


def handle_untrust(args: argparse.Namespace) -> int:
    from tui_agent.core.project import Project
    from tui_agent.core.trust import check, revoke

    if args.folder:
        from tui_agent.core.trust.trust_file import forget, real_path

        removed_folder = forget(args.folder)
        print(f"Untrusted the folder {real_path(args.folder)}." if removed_folder else f"{real_path(args.folder)} was not trusted.")
        return 0
    project = Project.at(args.project)
    removed = revoke(project)
    status = check(project)
    if status.state == "folder":
        print(f"{project.root} is still trusted through the trusted folder {status.folder}; "
              f"run `tuiagent untrust --folder {status.folder}` to untrust that folder.")
        return 1
    print(f"Untrusted {project.root}: it opens restricted." if removed else f"{project.root} was not trusted.")
    return 0
