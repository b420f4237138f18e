"""The sandbox's public names, the only ones code outside the package imports (tests/test_layering.py checks it):
`Sandbox` runs agent code isolated, with limits; the rest describe a run, its policy and what it left behind.
Each loads with its own module on first use, so importing the package costs nothing."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.core.lazyexports import lazy_exports

_HOME = {
    "IgnoredChange": "ignored", "NetworkGrant": "policy",
    "REFUSED": "protected", "RunResult": "policy", "RunWrites": "policy",
    "Sandbox": "sandbox", "SandboxPolicy": "policy", "SandboxUnavailable": "policy", "ShellCommand": "policy",
    "Snippet": "policy", "Stamp": "protected", "ToolBatch": "policy", "ToolCall": "policy",
    "ERROR_CANCELLED": "policy", "ERROR_SANDBOX": "policy", "ERROR_TIMEOUT": "policy", "TIER_BUBBLEWRAP": "policy",
    "is_startup_file": "protected", "matches_protected": "protected", "protected_paths": "protected",
}

if TYPE_CHECKING:
    from tui_agent.core.sandbox.ignored import IgnoredChange
    from tui_agent.core.sandbox.policy import (ERROR_CANCELLED, ERROR_SANDBOX, ERROR_TIMEOUT, TIER_BUBBLEWRAP,
                                               NetworkGrant, RunResult, RunWrites, SandboxPolicy, SandboxUnavailable,
                                               ShellCommand, Snippet, ToolBatch, ToolCall)
    from tui_agent.core.sandbox.protected import REFUSED, Stamp, is_startup_file, matches_protected, protected_paths
    from tui_agent.core.sandbox.sandbox import Sandbox

__all__ = [
    "ERROR_CANCELLED", "ERROR_SANDBOX", "ERROR_TIMEOUT", "IgnoredChange", "NetworkGrant",
    "REFUSED", "RunResult", "RunWrites", "Sandbox", "SandboxPolicy", "SandboxUnavailable", "ShellCommand",
    "Snippet", "Stamp", "TIER_BUBBLEWRAP", "ToolBatch", "ToolCall", "is_startup_file", "matches_protected",
    "protected_paths",
]


__getattr__ = lazy_exports(__name__, _HOME)
