"""An Agent Skill's script taken into the catalog, only through the authoring pipeline `create_tool` uses.

The skill folder is read as hostile input: its SKILL.md must follow the specification (name matching its folder),
its script must be a plain file inside it; then `Catalog.save` runs the static checks, the sandboxed import, schema
and the tool's own tests, the atomic write and the commit. Whatever fails, nothing is written."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.core.errors import TuiAgentError
from tui_agent.core.agent.skills import Skill, SkillError, load_skill
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.catalog.skill_export import SCRIPTS, strip_shim
from tui_agent.core.catalog.toolfile import MAX_TOOL_BYTES, check_name

if TYPE_CHECKING:
    from tui_agent.core.catalog.api import Catalog
    from tui_agent.core.versioning.store_interface import Change


class SkillImportError(TuiAgentError, ValueError):
    """A skill folder that cannot be imported (before the pipeline runs); nothing was written."""


@dataclass(frozen=True)
class SkillScript:
    skill: Skill
    tool: str
    source: str


def find_script(skill: Skill) -> Path:
    """The skill's one Python script: `scripts/<tool>.py`, the only one or the one named like the skill."""
    folder = skill.folder / SCRIPTS
    if not folder.is_dir() or folder.is_symlink():
        raise SkillImportError(f"skill {skill.name!r} has no {SCRIPTS}/ folder with a Python script to import")
    scripts = sorted(path for path in folder.glob("*.py"))
    if not scripts:
        raise SkillImportError(f"skill {skill.name!r} has no script: {SCRIPTS}/ holds no .py file")
    if len(scripts) > 1:
        named = [path for path in scripts if path.stem == skill.name.replace("-", "_")]
        if len(named) != 1:
            raise SkillImportError(f"skill {skill.name!r} has {len(scripts)} scripts "
                                   f"({', '.join(path.name for path in scripts)}) and none named "
                                   f"{skill.name.replace('-', '_')}.py: which one is the tool is unclear")
        scripts = named
    return scripts[0]


def read_script(path: Path) -> bytes:
    if path.is_symlink() or not path.is_file():
        raise SkillImportError(f"{path} is not a plain file (a link is never followed out of a skill)")
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_TOOL_BYTES + 1)
    except OSError as error:
        raise SkillImportError(f"{path}: cannot be read ({error.strerror or error})") from None
    if len(data) > MAX_TOOL_BYTES:
        raise SkillImportError(f"{path}: over the {MAX_TOOL_BYTES // 1024} KB limit of a tool file")
    return data


def read_skill(folder: Path) -> SkillScript:
    """The validated skill and its script as a tool source; SkillImportError naming what is wrong."""
    folder = folder.absolute()
    if not folder.is_dir():
        raise SkillImportError(f"{folder} is not a skill folder (a folder holding SKILL.md)")
    if (folder / "SKILL.md").is_symlink():
        raise SkillImportError(f"{folder / 'SKILL.md'} is a link; a skill's SKILL.md must be a plain file")
    try:
        skill = load_skill(folder, "import")
    except SkillError as error:
        raise SkillImportError(str(error)) from None
    path = find_script(skill)
    tool = path.stem
    try:
        check_name(tool)
    except PipelineError as error:
        raise SkillImportError(f"{path.name}: {error.message}") from None
    data = strip_shim(read_script(path))
    try:
        source = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise SkillImportError(f"{path}: not UTF-8 text") from None
    return SkillScript(skill, tool, source)


async def import_skill(catalog: Catalog, folder: Path, *, replace: bool = False) -> tuple[SkillScript, Change]:
    """Read the skill and save its script through the catalog's pipeline (PipelineError names the failing stage)."""
    script = read_skill(folder)
    exists = catalog.registry.get(script.tool) is not None or catalog.project.tool_path(script.tool).exists()
    if exists and not replace:
        raise SkillImportError(f"the catalog already has a tool named {script.tool!r}; pass --replace to make the "
                               "skill's script its next version (the old one stays in git)")
    change = await catalog.save(script.tool, script.source, author=f"from skill {script.skill.name}")
    return script, change
