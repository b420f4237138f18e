"""describe(project): exactly what a project would get once trusted, read statically (nothing imported or run)."""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.agent.instructions import unread_instructions
from tui_agent.core.project import ConfigError, Project
from tui_agent.core.textsafety import escaped
from tui_agent.core.trust.grants import AUTOMATIC_TRIGGERS, Grant, project_grants, read_recipe, recipe_line

MAX_LISTED = 200


@dataclass(frozen=True)
class Description:
    """The trust screen's and `tuiagent trust --show`'s content; `grants` are what trust approves by content."""

    root: str
    grants: tuple[Grant, ...]
    recipes: tuple[str, ...]
    tools: tuple[str, ...]
    mcp: tuple[str, ...]
    virtualenv: str | None
    symlinks: tuple[str, ...]
    problems: tuple[str, ...]
    instructions: tuple[str, ...] = ()

    def sections(self) -> list[tuple[str, list[str]]]:
        """(title, lines) in reading order; an empty section says so."""
        settings = [grant.text for grant in self.grants if grant.key.split(":")[0].split(".")[0] in
                    ("permissions", "sandbox", "local", "mcp", "web") and not grant.key.startswith("mcp:")]
        return [
            ("Permission grants (.agent/config.toml, .agent/config.local.toml)", settings or ["none"]),
            ("Recipes (automatic ones fire by themselves)", list(self.recipes) or ["none"]),
            ("Tools (.agent/tools/: their tests run at open; the model may call them)", list(self.tools) or ["none"]),
            ("MCP servers (run outside the sandbox)", list(self.mcp) or ["none"]),
            ("Virtualenv (first on the sandbox's PATH)", [self.virtualenv or "none"]),
            ("Git configuration that runs commands (the repository's config, the files it includes, its hooks; "
             "neutralised until trusted, then run for the commits made for you)",
             [grant.text for grant in self.grants if grant.key.startswith(("git:", "git.hook:", "git.error"))] or ["none"]),
            ("Symlinks under .agent/", list(self.symlinks) or ["none"]),
            ("Instructions to the model (read into its system prompt)", list(self.instructions) or ["none"]),
            *([("Problems", list(self.problems))] if self.problems else []),
        ]

    def text(self) -> str:
        """For a terminal: every project-controlled line escaped (an ESC or a newline in a docstring shows as `\\x1b`,
        `\\n`; it cannot move the cursor over the lines above it)."""
        lines = [f"Project {escaped(self.root)} would get:"]
        for title, items in self.sections():
            lines.append(f"\n{title}:")
            lines.extend(f"  - {escaped(item)}" for item in items)
        return "\n".join(lines)


def describe(project: Project) -> Description:
    problems: list[str] = []
    try:
        project.load_settings()
    except ConfigError as error:
        problems.append(f".agent/config.toml: {error} (the project does not open until it is fixed)")
    problems.extend(_mcp_problems(project))
    grants = project_grants(project)
    return Description(str(project.root), tuple(grants), tuple(_recipes(project)), tuple(_tools(project)),
                       tuple(grant.text for grant in grants if grant.key.startswith("mcp:")),
                       _virtualenv(project.root), tuple(_symlinks(project)), tuple(problems),
                       tuple(_instructions(project.root)))


def _mcp_problems(project: Project) -> list[str]:
    """The MCP server definitions that cannot be read (a malformed `.mcp.json`, a server without a command): skipped."""
    from tui_agent.core.mcp.config import load_server_configs

    return [f"{problem} (skipped)" for problem in load_server_configs(project)[1]]


def _instructions(root: Path) -> list[str]:
    """AGENTS.md / CLAUDE.md at the root, each with its size and first line."""
    lines = []
    for name in unread_instructions(root):
        text = (root / name).read_text(encoding="utf-8", errors="replace")
        first = next((line.strip() for line in text.splitlines() if line.strip()), "")
        lines.append(f"{name} ({len(text.splitlines())} lines): {first[:100]}")
    return lines


def _recipes(project: Project) -> list[str]:
    lines = []
    for path in _files(project.recipes_dir, "*.toml"):
        try:
            recipe = read_recipe(path.stem, projectfs.read_bytes(path))
        except OSError as error:
            recipe = error
        if isinstance(recipe, Exception):  # a hostile file: shown, never run
            lines.append(f"{path.stem}: not valid ({(str(recipe).splitlines() or [''])[0][:120]})")
            continue
        automatic = "" if recipe.trigger.on in AUTOMATIC_TRIGGERS else " (only when you type it)"
        disabled = " [disabled]" if not recipe.enabled else ""
        lines.append(f"{recipe.name}{disabled}: {recipe_line(recipe)}{automatic}")
    return lines


def _tools(project: Project) -> list[str]:
    return [f"{path.stem}: {tool_summary(path)}" for path in _files(project.tools_dir, "*.py") if not path.stem.startswith("_")]


def tool_summary(path: Path) -> str:
    """The first docstring line of the function named like the file (else the module's), parsed, never imported."""
    try:
        tree = ast.parse(projectfs.read_bytes(path))
    except projectfs.LinkRefused as refused:
        return f"({refused})"
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError) as error:  # nested past the parser's limit
        return f"({path.name} cannot be parsed: {type(error).__name__})"
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == path.stem:
            doc = ast.get_docstring(node)
            if doc:
                return doc.strip().splitlines()[0][:160]
    doc = ast.get_docstring(tree)
    return doc.strip().splitlines()[0][:160] if doc else "(no docstring)"


def _virtualenv(root: Path) -> str | None:
    """A virtualenv inside the project that the sandbox would put first on PATH once trusted."""
    candidates = [root / ".venv", root / "venv"]
    if os.environ.get("UV_PROJECT_ENVIRONMENT"):
        candidates.insert(0, root / os.path.expanduser(os.environ["UV_PROJECT_ENVIRONMENT"]))
    for candidate in candidates:
        if (candidate / "pyvenv.cfg").is_file() and (candidate / "bin").is_dir():
            link = f" (a symlink to {os.path.realpath(candidate)})" if candidate.is_symlink() else ""
            return f"{os.path.relpath(candidate, root)}{link}: its bin/ would come before the system's programs"
    return None


def _symlinks(project: Project) -> list[str]:
    found: list[str] = []
    for folder, dirs, files in os.walk(project.agent_dir):
        for name in [*dirs, *files]:
            path = Path(folder) / name
            if path.is_symlink():
                found.append(f"{path.relative_to(project.root)} -> {os.readlink(path)}")
            if len(found) >= MAX_LISTED:
                return found
    return found


def _files(folder: Path, pattern: str) -> list[Path]:
    return sorted(folder.glob(pattern))[:MAX_LISTED] if folder.is_dir() else []
