"""Catalog answers built from several parts: argument checks before a call, and tool search."""

from __future__ import annotations

import re
from typing import Any

from tui_agent.core.catalog import argcheck
from tui_agent.core.catalog.models import ToolSpec
from tui_agent.core.catalog.state import UsageStats
from tui_agent.core.content import schema_properties


def check_arguments(spec: ToolSpec, args: Any) -> dict[str, Any]:
    """The call's arguments checked against the tool's input schema (see argcheck.py); raises PipelineError."""
    return argcheck.check_arguments(spec.name, spec.input_schema, args)


def search_specs(specs: list[ToolSpec], usage: dict[str, UsageStats], query: str, limit: int = 20) -> list[ToolSpec]:
    """Tools ranked by how well the query words match their name, description and argument names."""
    words = [w for w in re.split(r"[^a-z0-9]+", query.lower()) if w]
    scored: list[tuple[float, int, str, ToolSpec]] = []
    for spec in specs:
        name = spec.name.lower()
        description = spec.description.lower()
        params = " ".join(schema_properties(spec.input_schema)).lower()
        score = 0.0
        for word in words:
            score += 3 if word in name else 0
            score += 1 if word in description else 0
            score += 0.5 if word in params else 0
        if words and score == 0:
            continue
        calls = usage[spec.name].calls if spec.name in usage else 0
        scored.append((-score, -calls, spec.name, spec))
    scored.sort(key=lambda item: item[:3])
    return [item[3] for item in scored[:limit]]
