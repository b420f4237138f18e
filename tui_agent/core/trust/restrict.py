"""The settings a restricted (untrusted) project runs with: its committed grants dropped, its restrictions kept."""

from __future__ import annotations


from tui_agent.core.settings import Settings

SAFE_MODES = ("ask", "read-only", "plan")


def restricted_settings(settings: Settings) -> Settings:
    """No allow rules, no mode but ask / read-only / plan, no extra environment or folders for agent code, no `[mcp]`
    table, no web search (the API's, billed per search); what only narrows (`sandbox.min_level`, protected globs,
    read-only) stays."""
    extra = {key: value for key, value in settings.extra.items() if key != "mcp"}
    mode = settings.permission_mode if settings.permission_mode in SAFE_MODES else "ask"
    return settings.model_copy(update={"permission_mode": mode, "allow_rules": (), "sandbox_env": (), "sandbox_paths": (),
                                       "web_search": False, "extra": extra})


def ignored_grants(settings: Settings) -> list[str]:
    """The committed grants a restricted session ignores, for its warnings."""
    ignored = []
    if settings.permission_mode not in SAFE_MODES:
        ignored.append(f"permissions.mode = {settings.permission_mode!r}")
    ignored += [f"allow rule {rule}" for rule in settings.allow_rules]
    ignored += [f"sandbox.env {name}" for name in settings.sandbox_env]
    ignored += [f"sandbox.paths {folder}" for folder in settings.sandbox_paths]
    if "mcp" in settings.extra:
        ignored.append("[mcp] settings")
    if settings.web_search:
        ignored.append("web.search = true")
    return ignored
