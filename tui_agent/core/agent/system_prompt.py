"""The system prompt (how to work, when to author a tool, the catalog index within a token budget) and catalog ranking."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tui_agent.core.content import TextBlock, ToolDefinition, cache_mark

if TYPE_CHECKING:
    from tui_agent.core.catalog.models import ToolRecord
    from tui_agent.core.protocols import AgentCatalog


CHARS_PER_TOKEN = 4

INSTRUCTIONS = """\
You are tuiagent, a coding assistant working inside the user's project (a git repository) at {root}.
Work step by step with your tools; keep answers short; say plainly what you changed.

Files: read_file, write_file, edit_file (exact, unique match; replace_all for every occurrence), list_files and grep
(ripgrep: .gitignore honoured; glob, type, -i, context, output_mode) work on project paths only; read_file shows
images (PNG, JPEG, GIF, WebP) too.
Permission mode: {mode}. In `ask` mode shell commands, writes outside .agent/, tools that declare WRITES and network
tools need the user's approval; if a call is denied, do not retry it unchanged: explain or choose another way.
In `plan` mode nothing is changed and no command runs: investigate with the reading tools, then call propose_plan
with your plan; once the user approves it the mode changes and you carry it out. Keep a multi-step task's checklist
with update_plan.

Your own tools (the catalog, `.agent/tools/<name>.py`, versioned in git) are first-class:
- Author a tool with create_tool when you notice a sequence of calls you have repeated (the same few reads, greps
  or commands, run again with other values), or a gap the catalog does not cover. One tool that does all the steps
  is better than repeating them: from your next request on you call it by its own name, in one step.
- Before writing one, check the catalog index below (and search_tools) so you do not write a near-duplicate;
  update an existing tool (create_tool with the same name) rather than adding a sibling.
- A tool file is plain Python that does not import tui_agent: one public function named like the file, type-hinted,
  with a docstring (a one-line summary, then `Args:`), optional `DEPENDS_ON = ["glob", ...]` naming project files it
  relies on, and `test_*` functions that test it (always write at least one). Tools run in a sandbox, without
  network unless declared (`NETWORK = ["files.example.org"]`, the names it reaches, or `NETWORK = True` for any
  public name; HTTP(S) goes through a proxy, never to this machine or its LAN), from the project root, with the
  project READ-ONLY: a tool that must change project files declares `WRITES = True` (each call then needs approval
  like a file edit; keep reading tools free of it). A tool's own tests always see the project read-only: let them write only under tempfile folders.
- If create_tool fails, read the error (stage, message, line), fix the source and call create_tool again.
- Use run_python to compose several catalog tools with loops and conditions in one step; it needs no approval
  because the project is read-only for it (except in `auto` mode): change files with write_file/edit_file.
- Prune (prune_tool) tools that are obsolete or duplicated.
"""


@dataclass(frozen=True)
class CatalogEntry:
    """What the prompt needs of a catalog tool."""

    name: str
    summary: str
    status: str
    calls: int
    last_used: float
    api: ToolDefinition | None  # the full definition, None when the tool has no good version


def entries_from_records(records: Iterable[ToolRecord]) -> list[CatalogEntry]:
    """Prompt entries from catalog records (the catalog doctor's token estimate)."""
    entries = []
    for record in records:
        spec = record.spec
        description = spec.description if spec is not None else ""
        summary = description.strip().splitlines()[0] if description.strip() else ""
        entries.append(CatalogEntry(record.name, summary[:120], record.status, record.calls or 0, record.last_used or 0.0, spec.to_api() if spec else None))
    return entries


def catalog_entries(catalog: AgentCatalog) -> list[CatalogEntry]:
    """Prompt entries straight from the registry and usage table: no git query per tool, so cheap before every request.

    Drift needs git, so only what the catalog last found is flagged: broken tools, and drifted tools whose own tests
    failed (for the version that failed)."""
    from tui_agent.core.catalog.models import broken_label  # loaded with the catalog, not with the first paint

    usage = catalog.state.usage()
    failing = catalog.failing_drift
    entries = []
    for entry in catalog.registry.entries():
        stats = usage.get(entry.name)
        description = entry.spec.description.strip() if entry.spec is not None else ""
        summary = description.splitlines()[0][:120] if description else ""
        status = broken_label(entry.error) if entry.error is not None else "ok"
        if entry.spec is not None and failing.get(entry.name) == entry.spec.source_sha:
            status = "drifted · failing"
        entries.append(CatalogEntry(entry.name, summary, status, stats.calls if stats else 0,
                                    (stats.last_used or 0.0) if stats else 0.0, entry.spec.to_api() if entry.spec else None))
    return entries


def rank(entries: Sequence[CatalogEntry], recent_names: Sequence[str] = ()) -> list[CatalogEntry]:
    """Most relevant first: tools authored in this session (newest first), then by last use, then by number of calls."""
    priority = {name: index for index, name in enumerate(reversed(recent_names))}
    return sorted(entries, key=lambda e: (e.name not in priority, priority.get(e.name, 0), -e.last_used, -e.calls, e.name))


def estimate_tokens(text: str) -> int:
    return (len(text) + CHARS_PER_TOKEN - 1) // CHARS_PER_TOKEN


def catalog_index(ranked: Sequence[CatalogEntry], token_budget: int) -> str:
    """The index (name and one-line summary) of as many tools as fit in the budget, best-ranked first."""
    if not ranked:
        return "Catalog: no tools yet. Author one with create_tool when a task calls for it."
    header = f"Catalog index ({len(ranked)} tools; call listed ones directly, any other with call_tool {{name, args}}):"
    overflow_line = "... and {n} more tools not listed here: use search_tools {{query}} to find them, then call_tool."
    budget_chars = token_budget * CHARS_PER_TOKEN - len(header) - len(overflow_line) - 8
    chosen: list[str] = []
    used = 0
    for entry in ranked:
        flag = f" [{entry.status}]" if entry.status.startswith("broken") or entry.status in ("drifted", "drifted · failing") else ""
        line = f"- {entry.name}: {entry.summary}{flag}"
        if used + len(line) + 1 > budget_chars:
            break
        chosen.append(line)
        used += len(line) + 1
    lines = [header, *sorted(chosen)]  # sorted by name: a stable text keeps the prompt cache warm
    if len(chosen) < len(ranked):
        lines.append(overflow_line.format(n=len(ranked) - len(chosen)))
    return "\n".join(lines)


def system_blocks(*, root: str, mode: str, index: str, extra: str = "", instructions: str = "", environment: str = "") -> list[TextBlock]:
    """One cached block: how to work, the project's instructions, the catalog index, the environment (the parts that
    change least between sessions first)."""
    parts = [INSTRUCTIONS.format(root=root, mode=mode), instructions, index, environment, extra]
    text = parts[0] + "\n" + "\n\n".join(part for part in parts[1:] if part)
    return [{"type": "text", "text": text, "cache_control": cache_mark()}]

