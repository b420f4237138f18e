"""The project's on-disk layout (`.agent/` paths) and its settings from `.agent/config.toml`."""

from __future__ import annotations

import errno
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

from typing import TYPE_CHECKING

from tui_agent.core.config_error import ConfigError

if TYPE_CHECKING:  # the settings model (pydantic) loads with the first settings read, after the first frame
    from tui_agent.core.settings import Settings

__all__ = ["AGENT_DIR", "ConfigError", "Project"]

AGENT_DIR = ".agent"

AGENT_GITIGNORE = """\
# tuiagent: local state, never committed
state.db
state.db-*
sessions/
runs/
cache/
config.local.toml
"""


def outside_state_home() -> Path:
    """`$XDG_STATE_HOME/tuiagent/projects` (default `~/.local/state/...`): local state of folders outside git."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "tuiagent" / "projects"


@dataclass(frozen=True)
class Project:
    """Paths of one project: its root and everything under `.agent/` (or, for a folder the person chose to use
    without git, under `kept_at`, a folder of the person's own outside it: that folder is never written to)."""

    root: Path
    kept_at: Path | None = None

    @classmethod
    def at(cls, root: str | Path) -> "Project":
        return cls(Path(root).resolve())

    @classmethod
    def kept_outside(cls, root: str | Path) -> "Project":
        """A folder used without git: its local state (sessions, run logs, caches) lives in
        `outside_state_home()/<name>-<hash of the real path>/`, so nothing is created in the folder itself."""
        real = Path(root).resolve()
        digest = hashlib.sha256(os.fsencode(real)).hexdigest()[:16]
        return cls(real, outside_state_home() / f"{real.name or 'root'}-{digest}")

    @property
    def outside_git(self) -> bool:
        """Used without git by the person's choice: no `.agent/` in the folder, no tools or recipes."""
        return self.kept_at is not None

    @property
    def agent_dir(self) -> Path:
        return self.kept_at if self.kept_at is not None else self.root / AGENT_DIR

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
    def local_config_path(self) -> Path:
        """The person's own settings for this project (git-ignored; applies only once the project is trusted)."""
        return self.agent_dir / "config.local.toml"

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
        """Create `.agent/` and its folders if missing and keep local state out of git (never overwrites): ignore
        rules in the repository's `info/exclude`, or `.agent/.gitignore` outside a repository. A read-only project
        is left as it is (read as a catalog that cannot change)."""
        from tui_agent.core.versioning.localexclude import ensure_excluded  # plain file work, no git process

        if self.kept_at is not None:  # the person's own folder, outside the project: no ignore rules needed
            for folder in (self.sessions_dir, self.runs_dir, self.cache_dir):
                folder.mkdir(parents=True, exist_ok=True, mode=0o700)
            return
        in_git = ensure_excluded(self.root)
        try:
            for folder in (self.tools_dir, self.recipes_dir, self.sessions_dir, self.runs_dir, self.cache_dir):
                folder.mkdir(parents=True, exist_ok=True)
            gitignore = self.agent_dir / ".gitignore"
            if not in_git and not gitignore.exists():
                gitignore.write_text(AGENT_GITIGNORE, encoding="utf-8")
        except OSError as error:
            if error.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise  # a read-only checkout is read as it is; anything else is an error

    def tool_path(self, name: str) -> Path:
        return self.tools_dir / f"{_plain(name)}.py"

    def recipe_path(self, name: str) -> Path:
        return self.recipes_dir / f"{_plain(name)}.toml"

    def relative(self, path: Path) -> str:
        """The path relative to the project root, with forward slashes (as git names it); a link at `path` itself is
        named, not followed (a committed `.agent/tools/x.py -> ~/key` is `.agent/tools/x.py`)."""
        return (path.parent.resolve() / path.name).relative_to(self.root).as_posix()

    def load_settings(self) -> Settings:
        """Read `.agent/config.toml` (validated by core/settings.py); a missing file gives the defaults, a bad one a ConfigError."""
        from tui_agent.core.settings import load_settings

        return load_settings(self.config_path)


def _plain(name: str) -> str:
    """The last guard before a name becomes a path: never a separator or `..` (callers check names first)."""
    if not name or "/" in name or "\\" in name or name in (".", "..") or "\0" in name:
        raise ValueError(f"{name!r} cannot name a file in .agent/ (a name is letters, digits, '_' and '-')")
    return name
