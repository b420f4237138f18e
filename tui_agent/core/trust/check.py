"""Whether a project is trusted now, and why not: never seen, or its grants changed since the person approved them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from tui_agent.core.project import Project
from tui_agent.core.trust import trust_file
from tui_agent.core.trust.grants import Grant, changes, fingerprint, git_approval, git_grants, project_grants
from tui_agent.core.versioning.gitdoor import approve, ask_trust_with, withdraw

TrustState = Literal["trusted", "folder", "new", "changed", "this run"]


@dataclass(frozen=True)
class TrustStatus:
    """`trusted` is what the runtime acts on; `state` and `changed` say why, for the trust screen and the warnings."""

    root: str
    state: TrustState
    changed: tuple[str, ...] = field(default=())
    """For state "changed": what differs from the approved grants (new, changed, removed)."""
    folder: str | None = None
    """The trusted folder this project inherits its trust from (state "folder")."""

    @property
    def trusted(self) -> bool:
        return self.state in ("trusted", "folder", "this run")

    def reason(self) -> str:
        """One sentence for a person: why the project is restricted, and how to trust it."""
        if self.trusted:
            return ""
        how = ("Run `tuiagent trust` to see what it grants and trust it (or `--trust-project` for one headless run); "
               "in the TUI, choose Trust on the trust screen, or type /trust later.")
        if self.state == "changed":
            return (f"this project's grants changed since you trusted it ({len(self.changed)} change(s): "
                    f"{'; '.join(self.changed)}), so it is restricted until you approve them again. {how}")
        return ("this project is not trusted yet, so it opens restricted: its committed permission grants, recipes, "
                "tools and MCP servers do not run, its virtualenv is not used and git runs none of the commands its "
                f"git configuration names. {how}")


_TRUSTED_THIS_RUN: set[str] = set()
"""Projects this process was told to trust for its own run (`--trust-project`): nothing is recorded."""


def approve_git(project: Project, grants: list[Grant] | None = None) -> None:
    """Let the commits made for the person run under the repository's git configuration as `grants` show it
    (read now when not given): a later change to it falls back to the git door's neutral configuration."""
    approve(project.root, git_approval(grants if grants is not None else git_grants(project)))


def trust_for_this_run(project: Project) -> TrustStatus:
    root = trust_file.real_path(project.root)
    _TRUSTED_THIS_RUN.add(root)
    approve_git(project)
    return TrustStatus(root, "this run")


def end_this_run(project: Project) -> None:
    _TRUSTED_THIS_RUN.discard(trust_file.real_path(project.root))


def check(project: Project) -> TrustStatus:
    """The project's trust as recorded outside it (parent folders included), compared by content."""
    root = trust_file.real_path(project.root)
    if root in _TRUSTED_THIS_RUN:
        approve_git(project)
        return TrustStatus(root, "this run")
    entry = trust_file.lookup(root)
    if entry is None:
        withdraw(project.root)
        return TrustStatus(root, "new")
    if entry.approved is None:
        approve_git(project)
        return TrustStatus(root, "folder", folder=entry.path)
    grants = project_grants(project)
    differences = changes(entry.approved, grants)
    if differences:
        withdraw(project.root)
        return TrustStatus(root, "changed", tuple(differences))
    approve_git(project, grants)
    return TrustStatus(root, "trusted")


def grant(project: Project) -> TrustStatus:
    """Trust the project with exactly what it grants now (a later change asks again)."""
    grants = project_grants(project)
    trust_file.record(project.root, fingerprint(grants))
    approve_git(project, grants)
    trust_file.swap_seen_tools(project.root, tool_digests(project))
    return TrustStatus(trust_file.real_path(project.root), "trusted")


def tool_digests(project: Project) -> dict[str, str]:
    """name -> sha256 of each tool file (what a pull may change without asking: tools run sandboxed)."""
    import hashlib

    digests = {}
    for path in sorted(project.tools_dir.glob("*.py")) if project.tools_dir.is_dir() else []:
        try:
            digests[path.stem] = hashlib.sha256(path.read_bytes()).hexdigest()
        except OSError:
            continue
    return digests


def tools_changed_since_last_seen(project: Project) -> list[str]:
    """The tools added or changed since this trusted project was last opened or closed (a pull, an outside edit),
    recording the current ones as seen; [] for a folder-trusted project (nothing is recorded for it)."""
    now = tool_digests(project)
    before = trust_file.swap_seen_tools(project.root, now)
    if before is None:
        return []
    return sorted(name for name, digest in now.items() if before.get(name) != digest)


def trust_folder(folder: str) -> None:
    """Trust a folder and every project below it, whatever they hold (VS Code's parent-folder trust)."""
    trust_file.record(folder, None)


def revoke(project: Project) -> bool:
    withdraw(project.root)
    return trust_file.forget(project.root)


def approve_local_change(project: Project, *, added: str | None = None, removed: str | None = None) -> None:
    """The person saved (`added`) or removed one of their own rules: that one rule's approval follows, nothing else.
    Another rule in the file (one a pull put there, say) stays as approved or unapproved as it was. One locked step,
    so a concurrent untrust is not undone."""
    from tui_agent.core.trust.grants import local_grants

    key = f"local.allow:{added}" if added is not None else None
    digests = {grant.key: grant.digest for grant in local_grants(project) if grant.key == key}

    def one_rule(approved: dict[str, str]) -> dict[str, str]:
        changed = dict(approved)
        if removed is not None:
            changed.pop(f"local.allow:{removed}", None)
        changed.update(digests)
        return changed

    trust_file.amend_approved(project.root, one_rule)


ask_trust_with(lambda root: check(Project.at(root)).trusted)
