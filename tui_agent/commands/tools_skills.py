"""`tuiagent tools export --skills DIR` and `tuiagent tools import-skill PATH`: the catalog as Agent Skills, both ways."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from tui_agent.commands.catalog_cli import Result
from tui_agent.core.content import JsonObject

EXPORT_HELP = "write every tool as an Agent Skills folder (SKILL.md and its script) under DIR"
IMPORT_HELP = "take an Agent Skill's script into the catalog, through the pipeline (sandbox, checks, tests, commit)"


def register_actions(action: Any) -> None:
    export = action("export", EXPORT_HELP)
    export.add_argument("--skills", required=True, metavar="DIR", help="the folder to write the skill folders into")
    take = action("import-skill", IMPORT_HELP)
    take.add_argument("path", metavar="PATH", help="a skill folder (holding SKILL.md and scripts/<tool>.py)")
    take.add_argument("--replace", action="store_true", help="make the script the next version of an existing tool")


def served_versions(catalog: Any) -> tuple[list[tuple[Any, bytes]], list[str]]:
    """(spec, bytes) of every tool's last good version, and one note per tool that has none."""
    from tui_agent.core.catalog.toolfile import source_sha

    versions: list[tuple[Any, bytes]] = []
    skipped: list[str] = []
    for entry in catalog.registry.entries():
        data = entry.runnable.read_bytes() if entry.spec is not None and entry.runnable is not None \
            and entry.runnable.is_file() else None
        if data is None or source_sha(data) != entry.spec.source_sha:
            skipped.append(f"{entry.name}: no good version to export")
            continue
        versions.append((entry.spec, data))
    return versions, skipped


async def cmd_export(catalog: Any, args: argparse.Namespace, _: JsonObject) -> Result:
    from tui_agent.core.catalog.skill_export import ExportError, write_export

    versions, skipped = served_versions(catalog)
    dest = Path(args.skills).expanduser().absolute()
    try:
        exported = write_export(versions, dest)
    except (ExportError, OSError) as error:
        text = f"tuiagent tools export: {error}"
        return {"error": str(error), "stage": "export"}, text, 1
    data = {"folder": str(dest), "skills": [{"tool": s.tool, "skill": s.skill, "folder": str(s.folder)}
                                            for s in exported], "skipped": skipped}
    lines = [f"{s.tool} -> {s.folder}" for s in exported] + [f"skipped {note}" for note in skipped]
    head = f"exported {len(exported)} tool{'s' if len(exported) != 1 else ''} as Agent Skills into {dest}"
    return data, "\n".join([head, *lines]), 0


async def cmd_import_skill(catalog: Any, args: argparse.Namespace, _: JsonObject) -> Result:
    from tui_agent.core.catalog.skill_import import SkillImportError, import_skill

    try:
        script, change = await import_skill(catalog, Path(args.path).expanduser(), replace=args.replace)
    except SkillImportError as error:
        return {"error": str(error), "stage": "skill"}, f"tuiagent tools import-skill: {error}", 1
    text = f"imported skill {script.skill.name} as tool {script.tool}: {change.verb}{change.note}"
    return {"skill": script.skill.name, "tool": script.tool} | change.to_dict(), text, 0
