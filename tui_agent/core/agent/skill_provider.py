"""The `use_skill` tool: a skill's instructions, or one of its files, read only when the model asks (progressive
disclosure); offered only when the session found a skill."""

from __future__ import annotations


from tui_agent.core.agent.skills import SKILL_FILE, Skill, SkillError
from tui_agent.core.agent.toolbase import ToolContext, ToolFailure, ToolOutput
from tui_agent.core.events import Event
from tui_agent.core.content import JsonObject, ToolDefinition

USE_SKILL = "use_skill"
MAX_RESOURCE_BYTES = 256 * 1024


class SkillProvider:
    """Holds the skills found when the session started (the system prompt lists the same ones)."""

    def __init__(self, skills: list[Skill]) -> None:
        self.skills = {skill.name: skill for skill in skills}

    async def prepare(self) -> list[Event]:
        return []

    def definitions(self) -> list[ToolDefinition]:
        if not self.skills:
            return []
        return [{"name": USE_SKILL, "description": (
            "Load an Agent Skill listed in the system prompt: its instructions, and the list of its files; with "
            "`resource` (a path from that list), that file's text."), "input_schema": {
            "type": "object", "properties": {"name": {"type": "string", "enum": [*sorted(self.skills)]},
                                             "resource": {"type": "string"}},
            "required": ["name"], "additionalProperties": False}}]

    def handles(self, name: str) -> bool:
        return name == USE_SKILL and bool(self.skills)

    async def call(self, context: ToolContext, name: str, arguments: JsonObject) -> ToolOutput:
        skill = self.skills.get(str(arguments.get("name", "")))
        if skill is None:
            raise ToolFailure(f"no skill named {arguments.get('name')!r}; the skills are: {', '.join(sorted(self.skills))}")
        resource = arguments.get("resource")
        if resource:
            return ToolOutput(read_resource(skill, str(resource)))
        try:
            body = skill.body()
        except SkillError as error:
            raise ToolFailure(str(error)) from None
        files = skill.resources()
        listing = ("\n\nFiles of this skill (load one with use_skill's `resource`): " + ", ".join(files)) if files else ""
        return ToolOutput(f"# Skill {skill.name} ({skill.folder})\n\n{body}{listing}")


def read_resource(skill: Skill, resource: str) -> str:
    """A file inside the skill's folder, as text; a path leading out of it (`..`, a link) is refused."""
    folder = skill.folder.resolve()
    wanted = (skill.folder / resource)
    try:
        real = wanted.resolve(strict=True)
    except (OSError, RuntimeError):
        raise ToolFailure(f"skill {skill.name} has no file {resource!r}") from None
    if not real.is_relative_to(folder) or wanted.is_symlink() or not real.is_file() or real.name == SKILL_FILE and real.parent == folder:
        raise ToolFailure(f"{resource!r} is not one of skill {skill.name}'s files (load the skill itself without `resource`)")
    data = real.read_bytes()[:MAX_RESOURCE_BYTES]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise ToolFailure(f"{resource!r} of skill {skill.name} is not text ({real.stat().st_size} bytes)") from None
