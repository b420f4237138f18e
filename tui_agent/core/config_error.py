"""ConfigError: `.agent/config.toml` is invalid, said in one line (kept apart from the settings model, which loads later)."""

from __future__ import annotations

from tui_agent.core.errors import TuiAgentError

CONFIG_NAME = ".agent/config.toml"


class ConfigError(TuiAgentError, ValueError):
    """`.agent/config.toml` is invalid; the message is one line: file:line, what is wrong, how to fix it."""

    def __init__(self, message: str, *, path: str = CONFIG_NAME, line: int | None = None) -> None:
        self.path, self.line, self.reason = path, line, message
        super().__init__(f"{path}:{line}: {message}" if line else f"{path}: {message}")
