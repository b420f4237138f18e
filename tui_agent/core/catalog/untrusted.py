"""Checks on what tuiagent reads back from `.agent/state.db` and `.agent/cache/`: agent code on a weak sandbox tier could have written it."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

from tui_agent.core import projectfs
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.catalog.files import read_bytes_or_none
from tui_agent.core.catalog.registry import Entry
from tui_agent.core.catalog.toolfile import source_sha
from tui_agent.core.project import Project

COMMIT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def commit_id(value: object) -> str | None:
    """`value` when it is a full commit id (never an option or a revision expression), else None."""
    return value if isinstance(value, str) and COMMIT_ID.fullmatch(value) else None


def project_path(value: object) -> bool:
    """Whether `value` is a plain project-relative path (no absolute path, no `..`)."""
    if not isinstance(value, str) or not value or "\0" in value:
        return False
    pure = PurePosixPath(value)
    return not pure.is_absolute() and ".." not in pure.parts


def validation(raw: object) -> dict[str, Any] | None:
    """A cached validation result, or None when it is not JSON or not shaped like one the inspector returns."""
    try:
        result = json.loads(raw) if isinstance(raw, (str, bytes)) else None
    except ValueError:
        return None
    if not isinstance(result, dict) or not isinstance(result.get("ok"), bool):
        return None
    if result["ok"]:
        return result if result_problem(result) is None else None
    return result if isinstance(result.get("name"), str) and isinstance(result.get("error"), dict) else None


def intact_copy(path: Path, sha: str) -> bool:
    """Whether the cached copy at `path` is a regular file whose content still hashes to `sha`."""
    try:
        if path.is_symlink() or not path.is_file():
            return False
        return hashlib.sha256(projectfs.read_bytes(path)).hexdigest() == sha
    except OSError:
        return False


def last_good_copy(state: Any, pipeline: Any, name: str) -> tuple[str, bytes] | None:
    """("last good copy", content) of the newest version of tool `name` whose cached copy is intact, or None.

    What restore falls back on when git holds no deleted version (no repository, no commit yet, or the commits were
    deferred): every validated version is kept in `.agent/cache/tools/<sha>.py`."""
    for sha in state.versions_newest_first(name):
        path = pipeline.runnable_path(sha)
        if isinstance(sha, str) and re.fullmatch(r"[0-9a-f]{64}", sha) and intact_copy(path, sha):
            return "the last good copy in .agent/cache", projectfs.read_bytes(path)
    return None


MAX_DESCRIPTION_CHARS = 4000


def result_problem(value: dict[str, Any]) -> str | None:
    """What is wrong with a successful inspector result; it comes from a process that ran the tool's code."""
    schema = value.get("schema")
    if not isinstance(schema, dict) or not isinstance(schema.get("name"), str):
        return "no schema"
    description = schema.get("description")
    if not isinstance(description, str) or not description or len(description) > MAX_DESCRIPTION_CHARS:
        return f"the description must be non-empty text of at most {MAX_DESCRIPTION_CHARS} characters"
    input_schema = schema.get("input_schema")
    if not isinstance(input_schema, dict) or input_schema.get("type") != "object" \
            or not isinstance(input_schema.get("properties"), dict):
        return "input_schema must be a JSON object schema"
    depends_on = value.get("depends_on", [])
    if not isinstance(depends_on, list) or not all(isinstance(g, str) for g in depends_on):
        return "depends_on must be a list of strings"
    network = value.get("network", False)
    if not isinstance(network, bool) and not (isinstance(network, list) and all(isinstance(n, str) for n in network)):
        return "network must be a boolean or a list of host names"
    if not isinstance(value.get("writes", False), bool):
        return "writes must be a boolean"
    tests = value.get("tests", [])
    if not isinstance(tests, list) or not all(isinstance(t, dict) and isinstance(t.get("name"), str) for t in tests):
        return "tests must be a list of results"
    return None


def recover_runnable(project: Project, git: Any, pipeline: Any, entry: Entry) -> None:
    """Rewrite a deleted `.agent/cache/tools/<sha>.py` from the file on disk or from git, if one matches the sha."""
    assert entry.spec is not None
    rel = project.relative(project.tool_path(entry.name))
    candidates: list[Callable[[], bytes | None]] = [lambda: read_bytes_or_none(project.tool_path(entry.name))]
    if entry.commit:
        candidates.append(lambda: git.show(rel, entry.commit or "HEAD"))
    for candidate in candidates:
        data = candidate()
        if data is not None and source_sha(data) == entry.spec.source_sha:
            pipeline.keep_runnable(data, entry.name)
            return
    raise PipelineError("missing", f"the last good version of {entry.name} is gone from .agent/cache and git")
