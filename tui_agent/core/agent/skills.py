"""Agent Skills (`SKILL.md` folders, agentskills.io): found in the project (trusted only) and in the home, validated.

A skill is offered to the model by name and description; its body and its other files are read only when the model
asks for them (`skill_provider.py`), as the specification's progressive disclosure describes."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core.errors import TuiAgentError

SKILL_FOLDERS = (".agents/skills", ".claude/skills")
SKILL_FILE = "SKILL.md"
NAME = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
MAX_NAME, MAX_DESCRIPTION = 64, 1024
MAX_SKILL_BYTES = 256 * 1024


class SkillError(TuiAgentError, ValueError):
    """A SKILL.md that does not follow the specification; the message names the file and what is wrong."""


@dataclass(frozen=True)
class Skill:
    name: str
    description: str
    folder: Path
    where: str
    """"project" or "home": which of the person's places holds it."""

    def body(self) -> str:
        """The instructions after the frontmatter (read again: the file may have changed since it was listed)."""
        return split_frontmatter(self.folder / SKILL_FILE, read_skill_file(self.folder / SKILL_FILE))[1]

    def resources(self) -> list[str]:
        """The skill's other files, relative to its folder (links are not followed out of it)."""
        found: list[str] = []
        for path in sorted(self.folder.rglob("*")):
            if path.is_file() and not path.is_symlink() and path.name != SKILL_FILE:
                found.append(path.relative_to(self.folder).as_posix())
        return found[:200]


def read_skill_file(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as error:
        raise SkillError(f"{path}: cannot be read ({error.strerror or error})") from None
    if len(data) > MAX_SKILL_BYTES:
        raise SkillError(f"{path}: {len(data)} bytes; a SKILL.md may have at most {MAX_SKILL_BYTES}")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SkillError(f"{path}: not UTF-8 text") from None


def split_frontmatter(path: Path, text: str) -> tuple[dict[str, str], str]:
    """The frontmatter's top-level `key: value` fields (nested maps such as `metadata:` are passed over) and the body."""
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        raise SkillError(f"{path}: no frontmatter: the file must start with a `---` line, then `name:` and "
                         "`description:`, then `---`")
    try:
        end = next(index for index, line in enumerate(lines[1:], start=1) if line.strip() == "---")
    except StopIteration:
        raise SkillError(f"{path}: the frontmatter is not closed by a `---` line") from None
    fields: dict[str, str] = {}
    for number, line in enumerate(lines[1:end], start=2):
        if not line.strip() or line.lstrip().startswith("#") or line[:1].isspace():
            continue
        key, colon, value = line.partition(":")
        if not colon or not key.strip():
            raise SkillError(f"{path}:{number}: not a `key: value` line: {line.strip()[:60]!r}")
        fields[key.strip()] = _unquote(value.strip())
    return fields, "\n".join(lines[end + 1:]).strip()


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


def load_skill(folder: Path, where: str) -> Skill:
    path = folder / SKILL_FILE
    fields, _body = split_frontmatter(path, read_skill_file(path))
    name, description = fields.get("name", ""), fields.get("description", "")
    if not name:
        raise SkillError(f"{path}: the frontmatter has no `name`")
    if len(name) > MAX_NAME or not NAME.match(name):
        raise SkillError(f"{path}: name {name!r} must be 1-{MAX_NAME} lowercase letters, digits and single hyphens")
    if name != folder.name:
        raise SkillError(f"{path}: name {name!r} does not match its folder {folder.name!r} (the specification "
                         "requires them to be the same)")
    if not description or len(description) > MAX_DESCRIPTION:
        raise SkillError(f"{path}: `description` must be 1-{MAX_DESCRIPTION} characters (it says when to use the skill)")
    return Skill(name, description, folder, where)


def skill_roots(root: Path, home: Path, *, trusted: bool) -> list[tuple[Path, str]]:
    """Where skills are looked for, first wins: the project's folders (a trusted project's only), then the home's."""
    places = [(root / folder, "project") for folder in SKILL_FOLDERS] if trusted else []
    return places + [(home / folder, "home") for folder in SKILL_FOLDERS]


def discover(root: Path, home: Path, *, trusted: bool) -> tuple[list[Skill], list[str]]:
    """Every valid skill (a name found twice: the first place wins) and one line per skill folder that is not valid."""
    skills: dict[str, Skill] = {}
    problems: list[str] = []
    for base, where in skill_roots(root, home, trusted=trusted):
        try:
            folders = sorted(path for path in base.iterdir() if path.is_dir() and (path / SKILL_FILE).is_file())
        except OSError:
            continue
        for folder in folders:
            try:
                skill = load_skill(folder, where)
            except SkillError as error:
                problems.append(f"skill not offered: {error}")
                continue
            skills.setdefault(skill.name, skill)
    return list(skills.values()), problems


def skills_prompt(skills: list[Skill]) -> str:
    """The system prompt's list of skills ("" when there are none)."""
    if not skills:
        return ""
    lines = [f"- {skill.name}: {skill.description}" for skill in skills]
    return ("# Agent Skills\nSkills are instructions (and files) for particular tasks. When a task matches a skill's "
            "description, call use_skill with its name first to load its instructions; load a file it mentions with "
            "use_skill's `resource` only when you need it.\n" + "\n".join(lines))
