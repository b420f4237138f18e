"""GrantWatch: a trusted session keeps the grants the person approved; a pull (or any outside edit) that changes
them (.agent/config.toml, config.local.toml, .mcp.json, an automatic recipe) is announced, not applied, and asked
again at the next open or with /trust."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

from tui_agent.core import projectfs
from tui_agent.core.project import Project
from tui_agent.core.trust import trust_file
from tui_agent.core.trust.grants import Grant, project_grants, recipe_grant

GRANT_FILES = (".agent/config.toml", ".agent/config.local.toml", ".mcp.json")
"""The files whose change can change what a project grants itself (recipes are watched one by one, and the project
files MCP servers run are added per session)."""

ASK = ("this session keeps what you approved; type /trust to see and approve the change (or it is asked when the "
       "project next opens)")


class GrantWatch:
    """Compares what changed on disk with the grants approved by content (`trust.json`); `notify` is told once per
    change. Inactive (everything passes, nothing is said) unless the project is trusted with a content pin: a
    folder-trusted project, or one trusted for this run only, approved whatever it holds."""

    def __init__(self, project: Project, active: bool, notify: Callable[[str], None],
                 watched: Iterable[str] = GRANT_FILES) -> None:
        self.project = project
        self.active = active
        self.notify = notify
        self.watched = set(watched)
        """Project-relative paths whose change is checked: GRANT_FILES and the files the MCP servers run."""
        self.announced: set[str] = set()
        self.held: set[str] = set()
        """Recipes whose new content is waiting for approval (their approved version, if any, stays live)."""

    @classmethod
    def for_session(cls, project: Project, trust_state: str, notify: Callable[[str], None]) -> GrantWatch:
        active = trust_state == "trusted"
        return cls(project, active, notify, {*GRANT_FILES, *(mcp_run_files(project) if active else ())})

    def approved(self) -> dict[str, str] | None:
        """The grants approved now, read again each time: the person's own saved rules, or `tuiagent trust` run
        meanwhile, are not news."""
        if not self.active:
            return None
        entry = trust_file.lookup(self.project.root)
        return entry.approved if entry is not None else None

    def _approved(self, grant: Grant, approved: dict[str, str] | None) -> bool:
        return approved is None or approved.get(grant.key) == grant.digest

    def recipes(self, names: Iterable[str], known: Callable[[str], bool]) -> set[str]:
        """The changed recipe files the session may reload: removals, `command` recipes, approved content and what
        the engine already holds (`known`: e.g. its own save); new or changed automatic recipes are held."""
        allowed: set[str] = set()
        approved = self.approved()
        for name in sorted(set(names)):
            grant = recipe_grant(self.project.recipe_path(name))
            if grant is None or self._approved(grant, approved) or known(name):
                self.held.discard(name)
                allowed.add(name)
                continue
            self.held.add(name)
            self._announce([grant], approved, "recipe changed on disk and not loaded")
        return allowed

    def gate(self, reload: Callable[[set[str]], Awaitable[object]],
             disk_sha: Callable[[str], str | None]) -> Callable[[set[str]], Awaitable[object]]:
        """`reload` (the recipe store's outside edit) for only the recipes `recipes` lets through; `disk_sha` is the
        sha256 of the content the engine already holds for a name (what it saved itself is not news)."""
        def known(name: str) -> bool:
            try:
                raw = projectfs.read_bytes(self.project.recipe_path(name))
            except OSError:
                return False
            return hashlib.sha256(raw).hexdigest() == disk_sha(name)

        async def gated(names: set[str]) -> object:
            allowed = self.recipes(names, known)
            return await reload(allowed) if allowed else []
        return gated

    def files_changed(self, paths: Iterable[str]) -> None:
        """Project files changed: when one can grant something, say what now differs from the approved set."""
        approved = self.approved() if any(path in self.watched for path in paths) else None
        if approved is None:
            return
        now = [grant for grant in project_grants(self.project) if not grant.key.startswith("recipe:")]
        keys = {grant.key for grant in now}
        differ = [grant for grant in now if not self._approved(grant, approved)]
        removed = [key for key in approved if key not in keys and not key.startswith("recipe:")]
        self._announce(differ, approved, "changed on disk and not applied", removed)

    def _announce(self, grants: list[Grant], approved: dict[str, str] | None, what: str,
                  removed: Iterable[str] = ()) -> None:
        lines = [f"{'changed' if approved and grant.key in approved else 'new'}: {grant.text}" for grant in grants]
        lines += [f"removed: {key}" for key in removed]
        fresh = [line for line in lines if line not in self.announced]
        if not fresh:
            return
        self.announced.update(fresh)
        self.notify(f"The project's grants {what} (a pull, an outside edit): {'; '.join(fresh)}. {ASK}.")


def mcp_run_files(project: Project) -> set[str]:
    """The project files the configured MCP servers run (their content is part of the approved grant)."""
    from tui_agent.core.mcp.config import load_server_configs
    from tui_agent.core.mcp.pinned import project_files

    root = project.root
    configs, _problems = load_server_configs(project)
    return {Path(os.path.relpath(os.path.abspath(root / name), root)).as_posix()
            for config in configs for name, _digest in project_files(config, root)}
