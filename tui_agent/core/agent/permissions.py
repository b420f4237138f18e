"""Permission modes (ask, auto, read-only, plan), allow rules, approval requests, and the injected approval callback."""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from tui_agent.core.agent.permission_rules import Rule, RuleError, parse_rule, suggested_rule

if TYPE_CHECKING:
    from tui_agent.core.project import Project

PermissionMode = Literal["ask", "auto", "read-only", "plan"]
PERMISSION_MODES: tuple[str, ...] = ("ask", "auto", "read-only", "plan")
READ_ONLY_MODES = ("read-only", "plan")
"""Plan mode refuses what read-only mode does; the model leaves it by proposing a plan the person approves."""
ApprovalKind = Literal["shell", "write", "network", "mcp", "web", "plan"]  # mcp: an MCP server's tool; web: web_fetch; plan: propose_plan
RULE_PLACEHOLDER = "{rule}"
"""In a denial hint, stands for the narrowest allow rule that would have covered the denied call."""


@dataclass(frozen=True)
class ApprovalRequest:
    """What a person is asked to approve: `detail` is the exact command or the unified diff."""

    kind: ApprovalKind
    tool: str
    summary: str
    detail: str
    subject: str | None = None
    """What command patterns of allow rules match (run_shell's command); None: only a tool-wide rule applies."""
    protected: bool = False
    """A write to a protected path (.agent/, .git, editor and shell files...): asked even in auto mode, and no allow
    rule covers it (`.agent/config.toml` holds the rules)."""
    notes: tuple[str, ...] = ()
    """What the person should know before answering (a program from the project's virtualenv, not the system's)."""
    read_only_safe: bool = False
    """Changes nothing (web_fetch reads a page): read-only mode asks about it like `ask` mode instead of refusing."""


RuleScope = Literal["session", "project"]


@dataclass(frozen=True)
class ApprovalAnswer:
    """A person's answer: allowed or not, and optionally a rule to remember for the session or the project."""

    allowed: bool
    rule: str | None = None
    scope: RuleScope = "session"
    reason: str = ""
    """A denial's words for the model (what to do instead): they go into the refused call's result."""


ApprovalCallback = Callable[[ApprovalRequest], Awaitable["bool | ApprovalAnswer"]]


@dataclass(frozen=True)
class Decision:
    """The outcome of a permission check; `reason` is shown to the model when refused."""

    allowed: bool
    reason: str = ""
    asked: bool = False
    note: str = ""
    """Something the person should know (a rule was saved, or could not be)."""


async def deny_all(request: ApprovalRequest) -> bool:
    """An approval callback that refuses everything (no person to ask)."""
    return False


async def approve_all(request: ApprovalRequest) -> bool:
    """An approval callback that accepts everything (`--yes`)."""
    return True


def flag_approver(*, yes: bool = False, allowed_tools: Iterable[str] = ()) -> ApprovalCallback:
    """The headless approval callback: `--yes` accepts all, `--allow RULE` accepts what the rule covers, the rest is denied."""
    rules = [parse_rule(text) for text in allowed_tools]

    async def approve(request: ApprovalRequest) -> bool:
        covered = any(rule.matches(request.tool, request.subject, request.kind == "network") for rule in rules)
        return yes or (covered and not request.protected)

    return approve


class Permissions:
    """Decides, per mode and allow rule, whether a shell command, a write outside `.agent/` or a network call may run.

    Rules come from the command line (`--allow`), the project (`[permissions] allow` in the committed
    .agent/config.toml), the person's local file (.agent/config.local.toml, "always allow for this project") and the
    session (answers in the approval modal); `problems` lists project rules that could not be read. A restricted
    (untrusted) project is opened with neither project nor local rules.
    """

    def __init__(self, mode: str, approve: ApprovalCallback, *, allowed_tools: Iterable[str] = (), denial_hint: str = "",
                 project: "Project | None" = None, project_rules: Iterable[str] = (),
                 local_rules: Iterable[str] = ()) -> None:
        if mode not in PERMISSION_MODES:
            raise ValueError(f"permission mode must be one of {', '.join(PERMISSION_MODES)}, not {mode!r}")
        self.mode: str = mode
        self.before_plan = "ask"
        """The mode plan mode was entered from: an approved plan goes back to it (to `ask` from read-only)."""
        self._approve = approve
        self.denial_hint = denial_hint
        self.project = project
        self.problems: list[str] = []
        self._rules: dict[str, tuple[Rule, str]] = {}
        for source, texts, where in (("project", project_rules, "config.toml"), ("local", local_rules, "config.local.toml")):
            for text in texts:
                try:
                    self._add(parse_rule(text), source)
                except RuleError as error:
                    self.problems.append(f".agent/{where} permissions.allow: {error}")
        for text in allowed_tools:
            self._add(parse_rule(text), "command line")  # RuleError: the caller reports the bad flag

    def _add(self, rule: Rule, source: str) -> None:
        self._rules.setdefault(rule.text, (rule, source))

    def rules(self) -> list[tuple[str, str]]:
        """(rule, source) for every allow rule in force; source is "project", "local", "session" or "command line"."""
        return [(text, source) for text, (_rule, source) in self._rules.items()]

    def add_rule(self, text: str, scope: RuleScope = "session") -> str:
        """Remember a rule for the session, or for the project in the person's own, git-ignored
        .agent/config.local.toml (never the committed config); returns what happened, in words."""
        rule = parse_rule(text)
        if scope == "project" and self.project is not None:
            from tui_agent.core.agent.allow_config import save_rule

            save_rule(self.project, rule.text, local=True)
            self._rules[rule.text] = (rule, "local")
            self._local_changed(added=rule.text)
            return f"saved allow rule {rule.text} in .agent/config.local.toml (yours: git-ignored, never committed)"
        self._add(rule, "session")
        return f"allowing {rule.text} for this session"

    def remove_rule(self, text: str) -> str:
        """Forget a rule (and take a saved rule out of the file that holds it)."""
        found = self._rules.pop(text, None)
        if found is None:
            raise RuleError(f"no allow rule {text!r}; /permissions lists them")
        if found[1] in ("project", "local") and self.project is not None:
            from tui_agent.core.agent.allow_config import remove_rule

            local = found[1] == "local"
            remove_rule(self.project, text, local=local)
            if local:
                self._local_changed(removed=text)
            return f"removed {text} from .agent/{'config.local.toml' if local else 'config.toml'}"
        return f"removed {text} ({found[1]})"

    def _local_changed(self, *, added: str | None = None, removed: str | None = None) -> None:
        """The person changed one of their own rules: the trusted project's approval of that one rule follows (the
        file's other rules, e.g. a pull's, are still asked about)."""
        if self.project is not None:
            from tui_agent.core.trust.check import approve_local_change

            approve_local_change(self.project, added=added, removed=removed)

    def allow_tool(self, name: str) -> None:
        """Approve every further call of `name` in this session without asking (an MCP tool after its first call)."""
        self._add(Rule(name), "session")

    def set_mode(self, mode: str) -> None:
        if mode not in PERMISSION_MODES:
            raise ValueError(f"permission mode must be one of {', '.join(PERMISSION_MODES)}, not {mode!r}")
        if mode == "plan" and self.mode != "plan":
            self.before_plan = self.mode
        self.mode = mode

    @property
    def read_only(self) -> bool:
        """Nothing is changed and no command runs (read-only and plan modes)."""
        return self.mode in READ_ONLY_MODES

    def mode_after_plan(self) -> str:
        return self.before_plan if self.before_plan in ("ask", "auto") else "ask"

    def covered_by_rule(self, request: ApprovalRequest) -> bool:
        network = request.kind == "network"
        return any(rule.matches(request.tool, request.subject, network) for rule, _source in self._rules.values())

    async def check(self, request: ApprovalRequest) -> Decision:
        """Allow, refuse or ask the injected callback, according to the mode and the rules."""
        if self.read_only and not request.read_only_safe:
            return Decision(False, f"refused: the session is in {self.mode} mode ({request.kind} not allowed)"
                            + ("; propose_plan presents your plan to the user" if self.mode == "plan" else ""))
        if not request.protected:
            if self.covered_by_rule(request):
                return Decision(True)
            if self.mode == "auto" and request.kind == "write":
                return Decision(True)
        answer = await self._approve(request)
        allowed = answer.allowed if isinstance(answer, ApprovalAnswer) else bool(answer)
        if allowed:
            note = self._learn(answer) if isinstance(answer, ApprovalAnswer) and not request.protected else ""
            return Decision(True, asked=True, note=note)
        said = answer.reason.strip() if isinstance(answer, ApprovalAnswer) else ""
        if said:
            return Decision(False, f"denied: the user did not approve this {request.kind} call ({request.summary}). "
                                   f"The person denied this call: {said}", asked=True)
        rule = shlex.quote(suggested_rule(request.tool, request.subject, request.kind == "network"))
        hint = f" {self.denial_hint.replace(RULE_PLACEHOLDER, rule)}" if self.denial_hint else ""
        return Decision(False, f"denied: the user did not approve this {request.kind} call ({request.summary}).{hint}", asked=True)

    def _learn(self, answer: ApprovalAnswer) -> str:
        if not answer.rule:
            return ""
        try:
            return self.add_rule(answer.rule, answer.scope)
        except (RuleError, ValueError, OSError) as error:  # ConfigError is a ValueError; the call itself was approved
            return f"could not save the allow rule {answer.rule}: {error}"
