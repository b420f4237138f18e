"""The project's on-disk layout (`.agent/` paths) and its settings from `.agent/config.toml`."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

AGENT_DIR = ".agent"

AGENT_GITIGNORE = """\
# tuiagent: local state, never committed
state.db
state.db-*
sessions/
runs/
cache/
"""


class ConfigError(ValueError):
    """`.agent/config.toml` could not be read; the message says where and why."""


@dataclass(frozen=True)
class Settings:
    """Project settings with their defaults; unknown keys are kept in `extra`."""

    model: str | None = None
    permission_mode: str = "ask"
    sandbox_min_level: str | None = None
    catalog_token_budget: int = 2000
    catalog_top_k: int = 40
    max_turns: int = 50
    allow_rules: tuple[str, ...] = ()
    """`[permissions] allow`: approval rules like `run_shell(pytest:*)` saved for the project."""
    sandbox_env: tuple[str, ...] = ()
    """`[sandbox] env`: names of extra variables passed to agent code (secret-looking names never are)."""
    sandbox_paths: tuple[str, ...] = ()
    """`[sandbox] paths`: extra folders made visible read-only to agent code."""
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Project:
    """Paths of one project: its root and everything under `.agent/`."""

    root: Path

    @classmethod
    def at(cls, root: str | Path) -> "Project":
        return cls(Path(root).resolve())

    @property
    def agent_dir(self) -> Path:
        return self.root / AGENT_DIR

    @property
    def tools_dir(self) -> Path:
        return self.agent_dir / "tools"

    @property
    def recipes_dir(self) -> Path:
        return self.agent_dir / "recipes"

    @property
    def config_path(self) -> Path:
        return self.agent_dir / "config.toml"

    @property
    def state_db(self) -> Path:
        return self.agent_dir / "state.db"

    @property
    def sessions_dir(self) -> Path:
        return self.agent_dir / "sessions"

    @property
    def runs_dir(self) -> Path:
        return self.agent_dir / "runs"

    @property
    def cache_dir(self) -> Path:
        return self.agent_dir / "cache"

    def ensure_layout(self) -> None:
        """Create `.agent/` and its folders and `.gitignore` if missing; never overwrites."""
        for folder in (self.tools_dir, self.recipes_dir, self.sessions_dir, self.runs_dir, self.cache_dir):
            folder.mkdir(parents=True, exist_ok=True)
        gitignore = self.agent_dir / ".gitignore"
        if not gitignore.exists():
            gitignore.write_text(AGENT_GITIGNORE, encoding="utf-8")

    def tool_path(self, name: str) -> Path:
        return self.tools_dir / f"{name}.py"

    def recipe_path(self, name: str) -> Path:
        return self.recipes_dir / f"{name}.toml"

    def relative(self, path: Path) -> str:
        """The path relative to the project root, with forward slashes (as git names it)."""
        return path.resolve().relative_to(self.root).as_posix()

    def load_settings(self) -> Settings:
        """Read `.agent/config.toml`; a missing file gives the defaults, a bad one a ConfigError."""
        if not self.config_path.exists():
            return Settings()
        try:
            data = tomllib.loads(self.config_path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"{self.relative(self.config_path)}: {exc}") from exc
        return settings_from_mapping(data)


def settings_from_mapping(data: dict[str, Any]) -> Settings:
    """Build Settings from parsed TOML: top-level `model`, `[permissions] mode`, `[sandbox] min_level`, `[catalog]`."""
    known = {"model", "permissions", "sandbox", "catalog", "agent"}
    permissions = data.get("permissions", {})
    sandbox = data.get("sandbox", {})
    catalog = data.get("catalog", {})
    agent = data.get("agent", {})
    for section_name, section in (("permissions", permissions), ("sandbox", sandbox), ("catalog", catalog), ("agent", agent)):
        if not isinstance(section, dict):
            raise ConfigError(f"config.toml: [{section_name}] must be a table")
    mode = permissions.get("mode", "ask")
    if mode not in ("ask", "auto", "read-only"):
        raise ConfigError(f"config.toml: permissions.mode must be ask, auto or read-only, not {mode!r}")
    return Settings(
        model=data.get("model"),
        permission_mode=mode,
        sandbox_min_level=sandbox.get("min_level"),
        catalog_token_budget=int(catalog.get("token_budget", 2000)),
        catalog_top_k=int(catalog.get("top_k", 40)),
        max_turns=int(agent.get("max_turns", 50)),
        allow_rules=_string_list(permissions, "allow", "permissions"),
        sandbox_env=_string_list(sandbox, "env", "sandbox"),
        sandbox_paths=_string_list(sandbox, "paths", "sandbox"),
        extra={key: value for key, value in data.items() if key not in known},
    )


def _string_list(section: dict[str, Any], key: str, section_name: str) -> tuple[str, ...]:
    value = section.get(key, [])
    if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
        raise ConfigError(f"config.toml: {section_name}.{key} must be a list of strings, like {key} = [\"...\"]")
    return tuple(value)
