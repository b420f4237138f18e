"""The one-line header: model, git branch, sandbox tier, MCP servers, and the session's tokens and cost."""

from __future__ import annotations

from rich.text import Text
from textual.reactive import reactive
from textual.widgets import Static

from tui_agent.ui.context_usage import UsageFigures


def format_tokens(count: int) -> str:
    """1234 -> '1.2k', 2_500_000 -> '2.5M'."""
    if count >= 1_000_000:
        return f"{count / 1_000_000:.1f}M"
    if count >= 1_000:
        return f"{count / 1_000:.1f}k"
    return str(count)


class StatusHeader(Static):
    """Shows what the session runs on; model, branch, busy, loading, usage and permission mode are bound to the app's
    reactives (`data_bind`), the sandbox tier and MCP servers are set on it."""

    model: reactive[str] = reactive("no model")
    branch: reactive[str] = reactive("")
    sandbox_tier: reactive[str] = reactive("")
    usage: reactive[UsageFigures] = reactive(UsageFigures())
    busy: reactive[bool] = reactive(False)
    still_loading: reactive[str] = reactive("")
    """What is still loading while the project opens ("" once everything is up); not Widget.loading, which would cover the header with a spinner."""
    mcp: reactive[str] = reactive("")  # the MCP servers: "2/3 up (name down)"
    mcp_failed: reactive[bool] = reactive(False)
    permission_mode: reactive[str] = reactive("ask")
    """Shown when it is not the default `ask` (shift+tab cycles it)."""

    def render(self) -> Text:
        """The full line when it fits; else short labels, then no brand, then the model's family name alone, then no
        branch: the mode, tokens, cost, context and busy mark are never dropped."""
        width = self.size.width or 200
        for compact, brand, trim in ((False, True, 0), (True, True, 0), (True, False, 0), (True, False, 1), (True, False, 2)):
            text = self._line(compact, brand, trim)
            if text.cell_len <= width:
                return text
        return text

    def _line(self, compact: bool, brand: bool = True, trim: int = 0) -> Text:
        """The full line, or (compact) the same facts without their labels: full names, arrows for tokens in/out;
        `trim` 1 shows the model without its `claude-` prefix, 2 leaves the branch out too."""
        text = Text()
        if brand:
            text.append(" tuiagent ", style="bold reverse")
        text.append("  " if not compact else " ")
        gap = "   " if not compact else "  "
        if not compact:
            text.append("model ", style="dim")
        text.append(self.model.removeprefix("claude-") if trim else self.model, style="bold")
        if self.branch and trim < 2:
            text.append(f"{gap}⎇ ", style="dim")
            text.append(self.branch, style="bold")
        if self.sandbox_tier:
            text.append(f"{gap}sandbox " if not compact else gap, style="dim")
            strong = self.sandbox_tier == "bubblewrap"
            text.append(self.sandbox_tier, style="bold green" if strong else "bold yellow")
        if self.permission_mode != "ask":
            text.append(gap)
            text.append(f"⚠ {self.permission_mode}" if self.permission_mode == "auto" else self.permission_mode,
                        style="bold reverse #e5c07b" if self.permission_mode == "auto" else "bold #61afef")
        if self.mcp:
            text.append(f"{gap}mcp ", style="dim")
            text.append(self.mcp, style="bold red" if self.mcp_failed else "bold green")
        text.append(f"{gap}tokens " if not compact else gap, style="dim")
        usage = self.usage
        tokens_in, tokens_out = format_tokens(usage.tokens_in), format_tokens(usage.tokens_out)
        text.append(f"{tokens_in} in / {tokens_out} out" if not compact else f"{tokens_in}↑ {tokens_out}↓")
        text.append(f"{gap}cost " if not compact else gap, style="dim")
        text.append(f"${usage.cost_usd:.4f}")
        if usage.context_percent >= 0:
            text.append(f"{gap}ctx " if not compact else gap, style="dim")
            level = "bold red" if usage.context_percent >= 85 else "bold #e5c07b" if usage.context_percent >= 70 else ""
            text.append(f"{usage.context_percent}%" + ("" if not compact else " ctx"), style=level)
        if self.still_loading:
            text.append(f"   ◌ loading {self.still_loading}…", style="italic #e5c07b")
        if self.busy:
            text.append(f"{gap}● working (esc cancels)" if not compact else f"{gap}● esc", style="bold #e5c07b")
        return text

    def watch_busy(self, busy: bool) -> None:
        self.set_class(busy, "-busy")
