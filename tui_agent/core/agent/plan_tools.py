"""The plan built-ins: update_plan (the model's checklist, shown by every front end) and propose_plan (plan mode's
way out: the person approves the plan and the session leaves plan mode)."""

from __future__ import annotations


from tui_agent.core.agent.permissions import ApprovalRequest
from tui_agent.core.agent.toolbase import BuiltinTool, ToolContext, ToolFailure, ToolOutput, require_str, schema
from tui_agent.core.events import PermissionModeChanged, PlanEntry, PlanUpdated
from tui_agent.core.content import JsonObject

STATUSES = ("pending", "in_progress", "completed")
PRIORITIES = ("high", "medium", "low")
MAX_ENTRIES = 50
MAX_ENTRY_CHARS = 500
MARKS = {"pending": "☐", "in_progress": "◐", "completed": "☑"}


def _entry(number: int, item: object) -> PlanEntry:
    where = f"entries[{number}]"
    if not isinstance(item, dict):
        raise ToolFailure(f"{where} must be an object {{content, status, priority?}}, not {type(item).__name__}")
    unknown = sorted(set(item) - {"content", "status", "priority"})
    if unknown:
        raise ToolFailure(f"{where} has unknown field(s) {', '.join(unknown)}: only content, status and priority")
    content = item.get("content")
    if not isinstance(content, str) or not content.strip():
        raise ToolFailure(f"{where}.content must be a non-empty string")
    if len(content) > MAX_ENTRY_CHARS:
        raise ToolFailure(f"{where}.content is longer than {MAX_ENTRY_CHARS} characters: one short step per entry")
    status, priority = item.get("status"), item.get("priority", "medium")
    if status not in STATUSES:
        raise ToolFailure(f"{where}.status must be one of {', '.join(STATUSES)}, not {status!r}")
    if priority not in PRIORITIES:
        raise ToolFailure(f"{where}.priority must be one of {', '.join(PRIORITIES)}, not {priority!r}")
    return PlanEntry(content.strip(), status, priority)


def plan_entries(args: JsonObject) -> tuple[PlanEntry, ...]:
    """The entries of an update_plan call, strictly checked; ToolFailure names the first thing wrong."""
    entries = args.get("entries")
    if not isinstance(entries, list):
        raise ToolFailure("`entries` is required and must be a list of {content, status, priority?}")
    if len(entries) > MAX_ENTRIES:
        raise ToolFailure(f"a plan has at most {MAX_ENTRIES} entries, not {len(entries)}")
    parsed = tuple(_entry(number, item) for number, item in enumerate(entries))
    if sum(entry.status == "in_progress" for entry in parsed) > 1:
        raise ToolFailure("at most one entry may be in_progress at a time")
    return parsed


def checklist(entries: tuple[PlanEntry, ...]) -> str:
    """The plan as a compact checklist, one line per entry."""
    if not entries:
        return "(the plan is empty)"
    return "\n".join(f"{MARKS[entry.status]} {entry.content}" + (" (high)" if entry.priority == "high" else "")
                     for entry in entries)


async def update_plan(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    extra = sorted(set(args) - {"entries"})
    if extra:
        raise ToolFailure(f"unknown argument(s) {', '.join(extra)}: update_plan takes only `entries`")
    entries = plan_entries(args)
    ctx.events.append(PlanUpdated(entries))
    done = sum(entry.status == "completed" for entry in entries)
    return ToolOutput(f"plan updated ({done}/{len(entries)} completed)")


async def propose_plan(ctx: ToolContext, args: JsonObject) -> ToolOutput:
    plan = require_str(args, "plan").strip()
    if not plan:
        raise ToolFailure("`plan` must not be empty")
    if ctx.permissions.mode != "plan":
        return ToolOutput(f"the session is not in plan mode (it is in `{ctx.permissions.mode}` mode): go ahead")
    after = ctx.permissions.mode_after_plan()
    request = ApprovalRequest("plan", "propose_plan", f"approve this plan and switch to {after} mode?", plan,
                              read_only_safe=True)
    try:
        await ctx.require_approval(request)
    except ToolFailure:
        raise ToolFailure("the user did not approve the plan: the session stays in plan mode. Ask what to change, "
                          "then propose a revised plan") from None
    ctx.permissions.set_mode(after)
    ctx.events.append(PermissionModeChanged(after))
    return ToolOutput(f"The user approved the plan; the permission mode is now `{after}`. Carry out the plan now.")


UPDATE_PLAN = BuiltinTool(
    "update_plan",
    "Keep a plan (a checklist) of the current task that the user sees: send the WHOLE list every time, each entry "
    "{content, status: pending|in_progress|completed, priority?: high|medium|low}. Use it for work of three or more "
    "steps; mark a step in_progress when you start it (one at a time) and completed as soon as it is done. It "
    "changes no file and needs no approval.",
    schema({"entries": {"type": "array", "description": "every entry of the plan, in order", "items": {
        "type": "object", "additionalProperties": False, "required": ["content", "status"], "properties": {
            "content": {"type": "string", "description": "one short step"},
            "status": {"type": "string", "enum": list(STATUSES)},
            "priority": {"type": "string", "enum": list(PRIORITIES)}}}}}, ["entries"]),
    update_plan,
)

PROPOSE_PLAN = BuiltinTool(
    "propose_plan",
    "In plan mode: present your plan (markdown) to the user once you have investigated. The user approves it (the "
    "session leaves plan mode and you carry it out) or refuses it (you stay in plan mode; ask what to change).",
    schema({"plan": {"type": "string", "description": "the plan, in markdown: the steps and the files they touch"}},
           ["plan"]),
    propose_plan,
)

PLAN_TOOLS = (UPDATE_PLAN, PROPOSE_PLAN)
