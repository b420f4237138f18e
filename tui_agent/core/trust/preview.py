"""A read-only store over a restricted project's tools or recipes: rows from the files (status `untrusted`), sources,
git history and diffs; nothing imported, tested, run or changed until the person trusts the project."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.core import projectfs
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.project import Project
from tui_agent.core.trust.describe import tool_summary
from tui_agent.core.versioning.store_interface import Change, Kind, StoreItem
from tui_agent.core.versioning.versions import diff_since

if TYPE_CHECKING:
    from tui_agent.core.versioning.gitqueries import HistoryEntry
    from tui_agent.core.versioning.gitstore import CatalogGit

UNTRUSTED = "untrusted"
REFUSAL = ("the project is not trusted, so its {kind}s are read-only and do not run. "
           "Run `tuiagent trust` (or /trust in the TUI) to use them")


class PreviewStore:
    """`VersionedStore` for a restricted runtime: every read works, every verb refuses with why and how."""

    def __init__(self, project: Project, kind: Kind, git: CatalogGit) -> None:
        self.project = project
        self.kind: Kind = kind
        self.git = git

    def _path(self, name: str) -> str:
        path = self.project.tool_path(name) if self.kind == "tool" else self.project.recipe_path(name)
        return self.project.relative(path)

    def _folder_files(self) -> list[str]:
        folder, suffix = (self.project.tools_dir, "py") if self.kind == "tool" else (self.project.recipes_dir, "toml")
        return sorted(path.stem for path in folder.glob(f"*.{suffix}") if not path.stem.startswith("_")) if folder.is_dir() else []

    def items(self) -> list[StoreItem]:
        rows = []
        for name in self._folder_files():
            summary = tool_summary(self.project.tool_path(name)) if self.kind == "tool" else "not loaded: the project is untrusted"
            rows.append(StoreItem(name, self.kind, UNTRUSTED, 0, None, summary, error=REFUSAL.format(kind=self.kind)))
        return rows

    def source(self, name: str) -> str | None:
        path = self.project.root / self._path(name)
        try:
            return projectfs.read_text(path, errors="replace") if path.is_file() else None
        except projectfs.LinkRefused as refused:  # shown instead of the file, never read through
            return f"# {refused}\n"
        except OSError:
            return None

    def _refuse(self) -> PipelineError:
        return PipelineError("trust", REFUSAL.format(kind=self.kind))

    async def save(self, name: str, source: str, *, author: str = "agent") -> Change:
        raise self._refuse()

    async def revert(self, name: str, rev: str | None = None) -> Change:
        raise self._refuse()

    async def prune(self, name: str) -> Change:
        raise self._refuse()

    async def restore(self, name: str) -> Change:
        raise self._refuse()

    def history(self, name: str) -> list[HistoryEntry]:
        return self.git.history(self._path(name))

    def diff(self, name: str, rev: str | None = None) -> str:
        return diff_since(self.git, self._path(name), rev, name)

    async def outside_edit(self, names: set[str]) -> list[str]:
        return []
