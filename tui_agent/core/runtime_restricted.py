"""The parts of a restricted (untrusted) runtime: settings and permissions without committed grants, read-only
previews of the catalog; nothing of the project imported, tested or started."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from tui_agent.core.agent.instructions import unread_instructions
from tui_agent.core.agent.permissions import ApprovalCallback, Permissions
from tui_agent.core.project import Project
from tui_agent.core.settings import Settings
from tui_agent.core.trust.check import TrustStatus
from tui_agent.core.trust.restrict import ignored_grants, restricted_settings

if TYPE_CHECKING:
    from tui_agent.core.versioning.store_interface import VersionedStore


def project_permissions(project: Project, settings: Settings, status: TrustStatus, approve: ApprovalCallback, *,
                        permission_mode: str | None, allowed_tools: Iterable[str], denial_hint: str) -> Permissions:
    """The session's permissions: the person's flags always; the project's and the local rules only when trusted."""
    from tui_agent.core.agent.allow_config import local_rules

    if not status.trusted:
        return Permissions(permission_mode or restricted_settings(settings).permission_mode, approve,
                           allowed_tools=allowed_tools, denial_hint=denial_hint, project=project)
    local, problems = local_rules(project)
    permissions = Permissions(permission_mode or settings.permission_mode, approve, allowed_tools=allowed_tools,
                              denial_hint=denial_hint, project=project, project_rules=settings.allow_rules,
                              local_rules=local)
    permissions.problems.extend(problems)
    return permissions


def restricted_notes(project: Project, settings: Settings, status: TrustStatus) -> list[str]:
    """The warnings a restricted session starts with: why, how to trust, and which grants are ignored."""
    notes = [f"restricted mode: {status.reason()}"]
    ignored = ignored_grants(settings)
    if ignored:
        notes.append(f"restricted mode: ignoring the project's grants ({', '.join(ignored)})")
    unread = unread_instructions(project.root)
    if unread:
        notes.append(f"restricted mode: {' and '.join(unread)} not given to the model as instructions until you trust "
                     "the project (the model can still read them as files)")
    return notes


def preview_stores(project: Project) -> dict[str, VersionedStore]:
    """"tool" / "recipe" → read-only stores listing the files (status `untrusted`), with their git history."""
    from tui_agent.core.trust.preview import PreviewStore
    from tui_agent.core.versioning.gitstore import CatalogGit

    git = CatalogGit(project.root)
    return {"tool": PreviewStore(project, "tool", git), "recipe": PreviewStore(project, "recipe", git)}
