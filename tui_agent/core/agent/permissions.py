"""Permission modes (ask, auto, read-only), approval requests, and the injected approval callback."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Literal

PermissionMode = Literal["ask", "auto", "read-only"]
PERMISSION_MODES: tuple[str, ...] = ("ask", "auto", "read-only")
ApprovalKind = Literal["shell", "write", "network"]


@dataclass(frozen=True)
class ApprovalRequest:
    """What a person is asked to approve: `detail` is the exact command or the unified diff."""

    kind: ApprovalKind
    tool: str
    summary: str
    detail: str
    protected: bool = False
    """A write to a protected path (.agent/, .git, editor and shell files...): asked even in auto mode."""


ApprovalCallback = Callable[[ApprovalRequest], Awaitable[bool]]


@dataclass(frozen=True)
class Decision:
    """The outcome of a permission check; `reason` is shown to the model when refused."""

    allowed: bool
    reason: str = ""
    asked: bool = False


async def deny_all(request: ApprovalRequest) -> bool:
    """An approval callback that refuses everything (no person to ask)."""
    return False


async def approve_all(request: ApprovalRequest) -> bool:
    """An approval callback that accepts everything (`--yes`)."""
    return True


def flag_approver(*, yes: bool = False, allowed_tools: Iterable[str] = ()) -> ApprovalCallback:
    """The headless approval callback: `--yes` accepts all, `--allow TOOL` accepts that tool, the rest is denied."""
    allowed = frozenset(allowed_tools)

    async def approve(request: ApprovalRequest) -> bool:
        return yes or request.tool in allowed

    return approve


class Permissions:
    """Decides, per mode, whether a shell command, a write outside `.agent/` or a network tool may run."""

    def __init__(self, mode: str, approve: ApprovalCallback, *, allowed_tools: Iterable[str] = (), denial_hint: str = "") -> None:
        if mode not in PERMISSION_MODES:
            raise ValueError(f"permission mode must be one of {', '.join(PERMISSION_MODES)}, not {mode!r}")
        self.mode: str = mode
        self._approve = approve
        self._allowed_tools = set(allowed_tools)
        self.denial_hint = denial_hint

    def set_mode(self, mode: str) -> None:
        if mode not in PERMISSION_MODES:
            raise ValueError(f"permission mode must be one of {', '.join(PERMISSION_MODES)}, not {mode!r}")
        self.mode = mode

    async def check(self, request: ApprovalRequest) -> Decision:
        """Allow, refuse or ask the injected callback, according to the mode."""
        if self.mode == "read-only":
            return Decision(False, f"refused: the session is in read-only mode ({request.kind} not allowed)")
        if request.tool in self._allowed_tools and not request.protected:
            return Decision(True)
        if self.mode == "auto" and request.kind == "write" and not request.protected:
            return Decision(True)
        approved = await self._approve(request)
        if approved:
            return Decision(True, asked=True)
        hint = f" {self.denial_hint}" if self.denial_hint else ""
        return Decision(False, f"denied: the user did not approve this {request.kind} call ({request.summary}).{hint}", asked=True)
