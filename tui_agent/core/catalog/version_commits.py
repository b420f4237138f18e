"""The commit a registered tool version was written at: known from the registry or state.db, else looked up in git once."""

from __future__ import annotations

from tui_agent.core.catalog.registry import Entry, Registry
from tui_agent.core.catalog.state import StateStore
from tui_agent.core.catalog.toolfile import source_sha
from tui_agent.core.project import Project
from tui_agent.core.versioning.gitstore import CatalogGit


class VersionCommits:
    """`version_commits(entry)`: the commit of the entry's registered version, or None when git has no such commit."""

    def __init__(self, project: Project, git: CatalogGit, state: StateStore, registry: Registry) -> None:
        self.project, self.git, self.state, self.registry = project, git, state, registry

    def __call__(self, entry: Entry) -> str | None:
        if entry.commit or entry.spec is None:
            return entry.commit
        rel = self.project.relative(self.project.tool_path(entry.name))
        commit = self.git.last_commit_for(rel)
        if commit is None:
            return None
        try:
            committed = self.git.show(rel, commit)
        except ValueError:
            return None
        if committed is not None and source_sha(committed) == entry.spec.source_sha:
            self.state.record_version(entry.name, entry.spec.source_sha, commit)
            self.state.set_version_commit(entry.name, entry.spec.source_sha, commit)
            self.registry.set_commit(entry.name, commit)
            return commit
        return None
