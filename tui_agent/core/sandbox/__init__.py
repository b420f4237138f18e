"""Isolated execution of agent code: tiers, limits, warm workers and the audit log."""

from tui_agent.core.sandbox.audit import AuditLog
from tui_agent.core.sandbox.policy import (
    TIER_BUBBLEWRAP,
    TIER_LEVELS,
    TIER_RLIMITS,
    RunResult,
    SandboxPolicy,
    SandboxUnavailable,
)
from tui_agent.core.sandbox.sandbox import Sandbox

__all__ = [
    "AuditLog",
    "RunResult",
    "Sandbox",
    "SandboxPolicy",
    "SandboxUnavailable",
    "TIER_BUBBLEWRAP",
    "TIER_LEVELS",
    "TIER_RLIMITS",
]
