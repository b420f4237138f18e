"""The default model, a small per-model price table, and token/cost accounting per request and per session."""

from __future__ import annotations

from dataclasses import dataclass

KNOWN_MODELS: tuple[str, ...] = (
    "claude-fable-5-2", "claude-mythos-5-2", "claude-haiku-5-5", "claude-sonnet-5-5", "claude-fable-5-1",
    "claude-opus-5-5", "claude-mythos-5-1", "claude-sonnet-5", "claude-fable-5", "claude-mythos-5", "claude-opus-5",
    "claude-opus-4-8", "claude-opus-4-7", "claude-mythos-preview", "claude-opus-4-6", "claude-sonnet-4-6",
    "claude-haiku-4-5", "claude-haiku-4-5-20251001", "claude-opus-4-5", "claude-opus-4-5-20251101",
)
"""The Claude model ids tuiagent knows, newest first: the `Model` literal of anthropic 2.17 (the tested SDK), copied
so that a newer SDK release changes neither the default model nor what /model lists."""


DEFAULT_MODEL = next(model for model in KNOWN_MODELS if "sonnet" in model)
"""The first Sonnet id in tuiagent's own model list."""


def default_model() -> str:
    return DEFAULT_MODEL


@dataclass(frozen=True)
class Price:
    """USD per million tokens."""

    input: float
    output: float

    @property
    def cache_write(self) -> float:
        return self.input * 1.25  # 5-minute ephemeral cache writes cost 1.25x base input

    @property
    def cache_read(self) -> float:
        return self.input * 0.1  # cache hits cost 0.1x base input


# From Anthropic's public pricing page (anthropic.com/pricing, "API" section, as of 2025): keyed by the
# first matching substring of a Claude model id. Claude ids not listed here (newer releases) are priced by family;
# any other model (behind ANTHROPIC_BASE_URL, e.g. a LiteLLM proxy) has no price: its cost is unknown.
PRICES: tuple[tuple[str, Price], ...] = (
    ("opus-4-5", Price(5.0, 25.0)),
    ("opus-4-1", Price(15.0, 75.0)),
    ("opus-4-0", Price(15.0, 75.0)),
    ("opus-4-2", Price(15.0, 75.0)),
    ("haiku-3-5", Price(0.8, 4.0)),
    ("haiku-3", Price(0.25, 1.25)),
    ("opus", Price(5.0, 25.0)),
    ("sonnet", Price(3.0, 15.0)),
    ("haiku", Price(1.0, 5.0)),
)


def price_for(model: str) -> Price | None:
    """The price of a Claude model; None for any other (a proxy's model is not priced as Claude because its
    name contains "sonnet"): its cost is unknown, not guessed."""
    lowered = model.lower()
    if "claude" not in lowered:
        return None
    for key, price in PRICES:
        if key in lowered:
            return price
    return None


@dataclass(frozen=True)
class RequestUsage:
    """Tokens of one model request and what they cost."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0


def request_usage(model: str, *, input_tokens: int, output_tokens: int, cache_read_tokens: int, cache_write_tokens: int) -> RequestUsage:
    price = price_for(model)
    cost = 0.0
    if price is not None:
        cost = (
            input_tokens * price.input
            + output_tokens * price.output
            + cache_write_tokens * price.cache_write
            + cache_read_tokens * price.cache_read
        ) / 1_000_000
    return RequestUsage(input_tokens, output_tokens, cache_read_tokens, cache_write_tokens, cost)


@dataclass
class UsageTotals:
    """Running totals for a turn or a session."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost_usd: float = 0.0
    requests: int = 0

    def add(self, usage: RequestUsage) -> None:
        self.input_tokens += usage.input_tokens
        self.output_tokens += usage.output_tokens
        self.cache_read_tokens += usage.cache_read_tokens
        self.cache_write_tokens += usage.cache_write_tokens
        self.cost_usd += usage.cost_usd
        self.requests += 1

    def since(self, before: "UsageTotals") -> "UsageTotals":
        """The tokens and cost added since `before` (a copy of these totals taken earlier)."""
        return UsageTotals(self.input_tokens - before.input_tokens, self.output_tokens - before.output_tokens,
                           self.cache_read_tokens - before.cache_read_tokens, self.cache_write_tokens - before.cache_write_tokens,
                           self.cost_usd - before.cost_usd, self.requests - before.requests)

    @property
    def prompt_tokens(self) -> int:
        """Every input token sent: uncached, written to the cache and read from it."""
        return self.input_tokens + self.cache_read_tokens + self.cache_write_tokens

    def to_dict(self) -> dict[str, float | int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cost_usd": round(self.cost_usd, 6),
            "requests": self.requests,
        }


def api_usage(totals: UsageTotals) -> dict[str, int]:
    """The totals under the Messages API's own usage names (as Claude Code's `-p --output-format json` prints them)."""
    return {
        "input_tokens": totals.input_tokens,
        "cache_creation_input_tokens": totals.cache_write_tokens,
        "cache_read_input_tokens": totals.cache_read_tokens,
        "output_tokens": totals.output_tokens,
    }


def cost_report(totals: UsageTotals, model: str) -> str:
    """What the session's tokens cost, line by line, at the model's prices (the /cost text)."""
    price = price_for(model)
    if price is None:
        return f"{totals.requests} requests; no known price for {model!r}: tokens in {totals.prompt_tokens:,}, out {totals.output_tokens:,}"
    rows = [
        ("input, uncached", totals.input_tokens, price.input),
        ("input, cache writes (1.25x)", totals.cache_write_tokens, price.cache_write),
        ("input, cache reads (0.1x)", totals.cache_read_tokens, price.cache_read),
        ("output", totals.output_tokens, price.output),
    ]
    lines = [f"Cost of this session ({totals.requests} requests, {model}):"]
    lines += [f"  {label:<28} {tokens:>11,} tokens  ${tokens * rate / 1e6:.4f}" for label, tokens, rate in rows]
    uncached_cost = (totals.prompt_tokens * price.input + totals.output_tokens * price.output) / 1e6
    lines.append(f"  {'total':<28} {'':>18}  ${totals.cost_usd:.4f}")
    if totals.prompt_tokens:
        share = totals.cache_read_tokens / totals.prompt_tokens
        lines.append(f"  the cache served {share:.0%} of input tokens; without it this would have cost ${uncached_cost:.4f}")
    return "\n".join(lines)
