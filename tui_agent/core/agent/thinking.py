"""Extended thinking: which models support which form, and the request parameters that obey the API's rules.

Rules (Messages API, "Extended thinking" and "Adaptive thinking"): adaptive thinking is `thinking: {"type": "adaptive"}`
with the effort level in `output_config: {"effort": ...}`; the fixed-budget form `{"type": "enabled", "budget_tokens":
N}` needs 1024 <= N < max_tokens and is refused by the newest models; thinking forbids a forced `tool_choice` (only
auto/none) and any `temperature` but 1 (tuiagent sends neither); thinking blocks go back unmodified, signature included,
first in the assistant turn they came in (history.py keeps them).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui_agent.core.errors import TuiAgentError

if TYPE_CHECKING:
    from tui_agent.core.settings import Settings

MODES = ("adaptive", "off")
EFFORTS = ("low", "medium", "high", "xhigh", "max")
MIN_BUDGET = 1024
ADAPTIVE_MAX_TOKENS = 32_000  # room for thinking and the answer (thinking tokens count toward max_tokens)
ANSWER_TOKENS = 8192  # what a fixed budget leaves for the answer

_CLAUDE = re.compile(r"claude-(?:(opus|sonnet|haiku|fable)-(\d+)(?:[-.](\d+))?(?![\d])|(\d+)-(\d+)-(sonnet|opus|haiku))")


class ThinkingSettingError(TuiAgentError, ValueError):
    """`thinking` or `effort` has a value tuiagent cannot send; the message says what to write instead."""


def support(model: str) -> str | None:
    """"adaptive" for models that think adaptively (Opus/Sonnet 4.6 and later, 5.x), "budget" for the earlier thinking
    models (3.7 Sonnet, the Claude 4 family up to 4.5), None for anything else (a local server's model, unknown ids)."""
    match = _CLAUDE.search(model.lower())
    if match is None:
        return None
    if match.group(4):  # claude-3-7-sonnet style
        major, minor, family = int(match.group(4)), int(match.group(5)), match.group(6)
        return "budget" if (major, minor) >= (3, 7) and family == "sonnet" else None
    family, major = match.group(1), int(match.group(2))
    minor = int(match.group(3)) if match.group(3) and len(match.group(3)) < 3 else 0  # a date suffix is not a minor
    if major >= 5 or (major == 4 and minor >= 6 and family != "haiku"):
        return "adaptive"
    return "budget" if major == 4 else None


@dataclass(frozen=True)
class ThinkingConfig:
    """What the person asked for: `mode` "auto" (the model's best), "adaptive", "off" or "budget"; `effort` or None."""

    mode: str = "auto"
    budget: int = 0
    effort: str | None = None

    @classmethod
    def parse(cls, thinking: str | int | None, effort: str | None = None) -> "ThinkingConfig":
        if effort is not None and effort not in EFFORTS:
            raise ThinkingSettingError(f"effort = {effort!r} is not allowed; use one of {', '.join(EFFORTS)}")
        if thinking is None or thinking == "auto":
            return cls("auto", 0, effort)
        text = str(thinking).strip().lower()
        if text in MODES:
            return cls(text, 0, effort)
        if text.isdigit():
            budget = int(text)
            if budget < MIN_BUDGET:
                raise ThinkingSettingError(f"thinking = {budget}: a thinking budget must be at least {MIN_BUDGET} tokens")
            return cls("budget", budget, effort)
        raise ThinkingSettingError(f"thinking = {thinking!r} is not allowed; use \"adaptive\", \"off\" or a budget in tokens "
                                   f"(at least {MIN_BUDGET}, e.g. \"16000\")")

    def resolved(self, model: str) -> str:
        """The form this model gets: "adaptive", "budget" or "off" ("auto" picks adaptive where the model has it)."""
        kind = support(model)
        if self.mode == "auto":
            return "adaptive" if kind == "adaptive" else "off"
        if self.mode == "adaptive" and kind == "budget":
            return "budget"  # an older thinking model: the fixed-budget form is the one it knows
        if self.mode == "budget" and kind == "adaptive":
            return "adaptive"  # fixed budgets are deprecated for these models, and refused by the newest
        return self.mode

    def strips_thinking(self, model: str) -> bool:
        """True when earlier thinking blocks must not be sent: no thinking for a model tuiagent does not know to think
        (a local server may refuse the block types); Claude models ignore earlier turns' thinking by themselves."""
        return self.resolved(model) == "off" and support(model) is None

    def note_for(self, model: str) -> str:
        """What the person should know about how their setting applies to this model ("" when it applies as written)."""
        if self.mode == "budget" and support(model) == "adaptive":
            return (f"thinking = {self.budget}: {model} thinks adaptively (a fixed budget is deprecated or refused for it), "
                    "so adaptive thinking is used; set `effort` to steer how much it thinks")
        if self.mode in ("adaptive", "budget") and support(model) is None:
            return f"thinking = {self.mode if self.mode == 'adaptive' else self.budget} is sent to {model}, which tuiagent does not know to think"
        return ""

    def request_params(self, model: str, max_tokens: int) -> tuple[dict[str, Any], int]:
        """The request's extra parameters (`thinking`, `output_config`) and the max_tokens to send with them."""
        params: dict[str, Any] = {}
        form = self.resolved(model)
        if form == "adaptive":
            params["thinking"] = {"type": "adaptive"}
            max_tokens = max(max_tokens, ADAPTIVE_MAX_TOKENS)
        elif form == "budget":
            budget = self.budget or max(MIN_BUDGET, max_tokens // 2)
            params["thinking"] = {"type": "enabled", "budget_tokens": budget}
            max_tokens = max(max_tokens, budget + ANSWER_TOKENS)  # the API refuses a budget >= max_tokens
        if self.effort is not None:
            params["output_config"] = {"effort": self.effort}
        return params, max_tokens

    def describe(self, model: str) -> str:
        form = self.resolved(model)
        text = {"adaptive": "adaptive", "off": "off", "budget": f"budget {self.budget or 'auto'} tokens"}[form]
        return text + (f", effort {self.effort}" if self.effort else "")


THINKING_DROPPED = ("the API refused the thinking blocks of earlier turns (signed for another key or model, e.g. a "
                    "session resumed elsewhere); they were left out of the request, which was sent again")


def refuses_thinking(error: Any) -> bool:
    """True for a 400 that refuses a thinking block itself (a bad `signature`, redacted `data`), which leaving earlier
    turns' thinking out can cure; not for a missing one ("Expected `thinking`..."), which it cannot."""
    message = str(getattr(error, "message", error)).lower()
    return getattr(error, "status", None) == 400 and "thinking" in message and ("signature" in message or "invalid" in message)


def thinking_from(settings: Settings) -> tuple[ThinkingConfig, list[str]]:
    """The session's thinking from `[agent]` settings (`open_runtime(thinking=, effort=)` put --thinking/--effort
    there); a bad value falls back to the default, with a line saying so."""
    try:
        return ThinkingConfig.parse(settings.thinking, settings.effort), []
    except ThinkingSettingError as error:
        return ThinkingConfig(), [f"{error}; using the default (adaptive where the model has it)"]
