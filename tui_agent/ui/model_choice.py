"""What `/model` knows: tuiagent's own list of Claude models, what a custom server lists, and whether a name is known."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tui_agent.core.agent.pricing import KNOWN_MODELS

if TYPE_CHECKING:
    from tui_agent.core.protocols import Model

DEFAULT_SERVER = "https://api.anthropic.com"


def known_models() -> list[str]:
    """The Claude model names tuiagent knows, newest first (its own list: not what the installed SDK declares)."""
    return list(KNOWN_MODELS)


async def server_models(client: Model) -> tuple[list[str], str]:
    """(model ids the server lists, a note); the note says why the list is empty."""
    import anthropic

    from tui_agent.core.agent.model import ModelClient

    if not isinstance(client, ModelClient):  # e.g. an in-process scripted model
        return [], "this client cannot list the server's models"
    try:
        return await client.server_models(), ""
    except anthropic.APIStatusError as exc:  # a server without GET /v1/models: its status, not its whole error body
        return [], f"the server gave no model list ({type(exc).__name__}: HTTP {exc.status_code} for GET /v1/models)"
    except anthropic.APIError as exc:
        return [], f"the server gave no model list ({type(exc).__name__}: {exc.message})"
    except (ValueError, TypeError, KeyError, AttributeError) as exc:  # an answer the SDK cannot read: not JSON, not a list
        return [], f"the server gave no model list ({type(exc).__name__}: {exc})"


def model_listing(current: str, known: list[str], server: list[str], base_url: str, note: str) -> str:
    """The /model answer: the current model, the server's models (for a custom base URL), the known Claude names."""
    lines = [f"Model: {current}. Switch with /model NAME."]
    if base_url.rstrip("/") != DEFAULT_SERVER:
        lines.append(f"The server at {base_url} offers: {', '.join(server)}" if server else f"The server at {base_url}: {note}")
    lines.append("Claude models tuiagent knows: " + ", ".join(known))
    return "\n".join(lines)


def unknown_model_warning(name: str, known: list[str], server: list[str]) -> str | None:
    """A warning when `name` is neither a model tuiagent knows nor one the server lists (None when it is known)."""
    if name in known or name in server:
        return None
    close = [model for model in (*server, *known) if name.split("-")[0] in model][:5]
    hint = f" Known names like it: {', '.join(close)}." if close else " /model lists the known names."
    return f"{name} is not a model tuiagent knows{' or the server lists' if server else ''}: the next request may fail.{hint}"
