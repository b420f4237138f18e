"""The repair prompt for a drifted or broken tool: its drift diff, its failing test output and its source."""

from __future__ import annotations

from tui_agent.core.catalog.models import DriftReport, ToolRecord

DIFF_LIMIT = 6000


def repair_prompt(record: ToolRecord, report: DriftReport | None, source: str) -> str:
    """What the agent needs to fix the tool through create_tool as a new version."""
    parts = [f"The catalog tool `{record.name}` (.agent/tools/{record.name}.py) needs a repair: status {record.status}."]
    if record.error is not None:
        line = f" at line {record.error.line}" if record.error.line else ""
        parts.append(f"Its current file fails the pipeline at the {record.error.stage} stage{line}: {record.error.message}")
    if report is not None and report.changed_files:
        diff = report.diff if len(report.diff) <= DIFF_LIMIT else report.diff[:DIFF_LIMIT] + "\n[diff cut]"
        since = (report.since_commit or "unknown")[:10]
        parts.append(f"Files it depends on changed since it was written (commit {since}): "
                     f"{', '.join(report.changed_files)}\n```diff\n{diff.rstrip()}\n```")
    failing = [test for test in (report.tests if report else ()) if not test.ok]
    if failing:
        parts.append("Its own tests now fail:\n" + "\n".join(
            f"- {test.name}" + (f" (line {test.line})" if test.line else "") + f": {test.error or 'failed'}" for test in failing))
    elif report is not None and report.test_error:
        parts.append(f"Its tests could not run: {report.test_error.get('message', report.test_error)}")
    parts.append(f"Its source:\n```python\n{source.rstrip()}\n```")
    parts.append("Update the tool with create_tool (same name) so that it matches the project as it is now and its "
                 "tests pass; keep its name and arguments unless they must change.")
    return "\n\n".join(parts)
