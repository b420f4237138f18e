"""One error root: every exception class tuiagent defines derives from TuiAgentError."""

from __future__ import annotations

import importlib
import inspect
import pkgutil

import tui_agent
from tui_agent.core.errors import ErrorKind, TuiAgentError

SANDBOX_SIDE = {"tui_agent.core.sandbox.worker"}
"""Loaded by file inside the sandbox, stdlib only (no tui_agent package there): its McpToolError cannot import the root."""


def project_exception_classes() -> list[type[BaseException]]:
    found: list[type[BaseException]] = []
    for info in pkgutil.walk_packages(tui_agent.__path__, "tui_agent."):
        if info.name in SANDBOX_SIDE:
            continue
        module = importlib.import_module(info.name)
        found += [value for value in vars(module).values()
                  if inspect.isclass(value) and issubclass(value, BaseException) and value.__module__ == module.__name__]
    return found


def test_every_project_exception_derives_from_the_root() -> None:
    classes = project_exception_classes()
    names = {cls.__name__ for cls in classes}
    assert {"PipelineError", "ModelError", "GitFailure", "CommandFailure", "ArgumentError"} <= names  # the walk sees them
    assert [cls.__qualname__ for cls in classes if not issubclass(cls, TuiAgentError) and cls is not TuiAgentError] == []


def test_errors_keep_the_builtin_base_their_callers_catch() -> None:
    from tui_agent.core.agent.sessions import SessionNotFound
    from tui_agent.core.sandbox.policy import SandboxUnavailable
    from tui_agent.core.settings import ConfigError

    assert issubclass(ConfigError, ValueError) and issubclass(SessionNotFound, LookupError)
    assert issubclass(SandboxUnavailable, RuntimeError)


def test_a_model_error_kind_is_an_enum_that_reads_as_its_old_word() -> None:
    from tui_agent.core.agent.model import ModelError

    error = ModelError("context_too_long", "too long")  # type: ignore[arg-type]  # the scripted model passes words
    assert error.kind is ErrorKind.CONTEXT_TOO_LONG and error.kind == "context_too_long"
    assert isinstance(error, TuiAgentError)


def broad_handlers() -> list[str]:
    """Every `except Exception` (alone or in a tuple) in tui_agent, as "path:line: source line"."""
    import ast
    from pathlib import Path

    found: list[str] = []
    for path in sorted(Path(tui_agent.__file__).parent.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if not isinstance(node, ast.ExceptHandler) or node.type is None:
                continue
            named = node.type.elts if isinstance(node.type, ast.Tuple) else [node.type]
            if any(isinstance(name, ast.Name) and name.id == "Exception" for name in named):
                found.append(f"{path.name}:{node.lineno}: {lines[node.lineno - 1].strip()}")
    return found


def test_except_exception_only_at_process_edges_each_with_its_reason() -> None:
    handlers = broad_handlers()
    assert any("listeners.py" in handler for handler in handlers)  # the walk sees them
    assert len(handlers) <= 20, "\n".join(handlers)
    assert [handler for handler in handlers if "#" not in handler] == []  # each says why it catches everything
