"""`tuiagent tools suggest|doctor|repair`: suggested tools, the catalog doctor and the repair prompt for a drifted tool.

The core modules are imported in the command that uses them: every `tuiagent` start registers these actions (the TUI
and `-p` included), and only these three commands need the tending code."""

from __future__ import annotations

import argparse
from typing import Any

from tui_agent.commands.catalog_cli import Result
from tui_agent.core.content import JsonObject


def register_actions(action: Any) -> None:
    suggest = action("suggest", "repeated call chains that could become one tool, with their evidence")
    suggest.add_argument("--dismiss", metavar="ID", help="never suggest this chain again")
    doctor = action("doctor", "unused, never-called, near-duplicate, broken, drifted and untested tools")
    doctor.add_argument("--unused-days", type=int, default=30, metavar="N", help="unused after N days (default 30)")
    repair = action("repair", "hand the agent a drifted or broken tool's diff, failing tests and source")
    repair.add_argument("name")
    repair.add_argument("--print-prompt", action="store_true", help="print the repair prompt instead of running the agent")


async def cmd_suggest(catalog: Any, args: argparse.Namespace, _: JsonObject) -> Result:
    from tui_agent.core.tending.suggestions import SuggestionBook, to_report

    book = SuggestionBook(catalog.project.sessions_dir, catalog.state)
    if args.dismiss:
        if not book.dismiss(args.dismiss):
            return {"error": f"no current suggestion {args.dismiss!r}", "stage": "suggest"}, \
                f"tuiagent tools: no current suggestion {args.dismiss!r} (see `tuiagent tools suggest`)", 1
        return {"dismissed": args.dismiss}, f"dismissed suggestion {args.dismiss}", 0
    reports = [to_report(chain) for chain in book.current()]
    lines = [f"{r['id']}  {r['chain']}  ran {r['count']} times in {len(r['sessions'])} session(s)\n  {r['note']}\n"
             f"  sessions: {', '.join(r['sessions'])}" for r in reports]
    return reports, "\n".join(lines) or "no suggestions: no repeated call chain in the recent sessions", 0


async def cmd_doctor(catalog: Any, args: argparse.Namespace, _: JsonObject) -> Result:
    if args.unused_days < 1:
        return {"error": "--unused-days must be at least 1", "stage": "arguments"}, \
            "tuiagent tools: --unused-days must be at least 1", 2
    from tui_agent.core.tending.care import doctor_input
    from tui_agent.core.tending.doctor import examine, summary

    data = doctor_input(catalog, args.unused_days)
    findings = examine(data)
    numbers = summary(data, findings)
    head = (f"{numbers['tools']} tools: {numbers['broken']} broken, {numbers['drifted']} drifted, "
            f"{numbers['untested']} without tests, {numbers['never-called']} never called, {numbers['unused']} unused, "
            f"{numbers['near-duplicate']} near-duplicate pairs; catalog index {numbers['index_tokens']}/"
            f"{numbers['token_budget']} prompt tokens ({numbers['budget_share']:.0%})")
    lines = [f"- {f.kind}: {', '.join(f.tools) or 'catalog'}: {f.detail}\n    {f.action}: {f.command}" for f in findings]
    return {"summary": numbers, "findings": [f.to_dict() for f in findings]}, "\n".join([head, *lines]), 0


async def cmd_repair(catalog: Any, args: argparse.Namespace, _: JsonObject) -> Result:
    """The repair prompt for NAME (its drift report made fresh, tests included); `tools` hands it to the agent."""
    from tui_agent.core.tending.repair import repair_prompt

    record = next((r for r in catalog.tools() if r.name == args.name), None)
    if record is None:
        return {"error": f"no tool named {args.name!r}", "stage": "arguments"}, f"tuiagent tools: no tool named {args.name!r}", 1
    reports = await catalog.drift(args.name) if record.spec is not None else []
    report = reports[0] if reports else None
    needs_repair = record.status == "broken" or (report is not None and (report.drifted or report.tests_pass is False))
    prompt = repair_prompt(record, report, catalog.source(args.name) or "")
    data = {"name": args.name, "status": record.status, "needs_repair": needs_repair, "prompt": prompt}
    if not needs_repair:
        return data, f"{args.name} needs no repair: it is not broken, not drifted and its tests pass", 0
    return data, prompt, 0
