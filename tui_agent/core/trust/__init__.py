"""Workspace trust: what a project may do before and after the person trusts it, recorded outside the repository."""

from tui_agent.core.trust.check import TrustStatus, check, grant, revoke, trust_folder
from tui_agent.core.trust.describe import Description, describe
from tui_agent.core.trust.restrict import restricted_settings

__all__ = ["Description", "TrustStatus", "check", "describe", "grant", "restricted_settings", "revoke", "trust_folder"]
