"""The core must never import Textual: the TUI is a thin layer over core events."""

from __future__ import annotations

import ast
import re
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

CORE = Path(__file__).resolve().parent.parent / "tui_agent" / "core"


def imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_core_has_no_textual_import() -> None:
    offenders = [
        str(path.relative_to(CORE))
        for path in CORE.rglob("*.py")
        if any(name == "textual" or name.startswith("textual.") for name in imported_modules(path))
    ]
    assert CORE.is_dir() and list(CORE.rglob("*.py"))
    assert offenders == []


def test_core_modules_have_docstrings() -> None:
    missing = [str(p.relative_to(CORE)) for p in CORE.rglob("*.py") if ast.get_docstring(ast.parse(p.read_text())) is None]
    assert missing == []


def test_git_is_reached_only_through_core_versioning() -> None:
    """Scanned in a fresh interpreter (tests/git_scan.py): CPython 3.11.7's ast.parse can raise a spurious
    SystemError in a long-lived test worker."""
    result = subprocess.run([sys.executable, str(Path(__file__).with_name("git_scan.py"))], capture_output=True, text=True,
                            check=True, timeout=60)
    found = json.loads(result.stdout)
    assert found["modules"] > 50 and found["versioning_importing_git"]
    assert found["importing"] == [] and found["running"] == []


def test_the_first_paint_imports_nothing_heavy() -> None:
    """The CLI and the TUI module import no SDK, git, sandbox, catalog, tending, recipes or watcher: those load in
    workers after the first screen (or with the `tuiagent tools` command that uses them)."""
    heavy = ["anthropic", "git", "watchfiles", "mcp", "tui_agent.core.sandbox", "tui_agent.core.catalog.api",
             "tui_agent.core.agent.loop", "tui_agent.core.runtime", "tui_agent.core.tending.care",
             "tui_agent.core.tending.suggestions", "tui_agent.core.recipes", "tomlkit", "pathspec", "pydantic"]
    probe = f"import sys, tui_agent.cli, tui_agent.ui.app; print([name for name in {heavy!r} if name in sys.modules])"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]", loaded


def test_the_app_holds_collaborators_instead_of_mixins_and_probes_nothing() -> None:
    """TuiAgentApp's parts (turn runner, catalog sync, slash and undo commands, catalog actions) are objects it holds;
    the UI reads the typed runtime directly: no getattr/hasattr call anywhere in tui_agent/ui/."""
    from textual.app import App

    from tui_agent.ui.app import TuiAgentApp
    from tui_agent.ui.turn import TurnRunner

    assert TuiAgentApp.__bases__ == (App,)
    assert isinstance(TuiAgentApp(CORE.parent.parent).turns, TurnRunner)
    ui = CORE.parent / "ui"
    probes = [f"{path.relative_to(ui)}:{node.lineno}" for path in ui.rglob("*.py") for node in ast.walk(ast.parse(path.read_text()))
              if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("getattr", "hasattr")]
    assert list(ui.rglob("*.py")) and probes == []


def test_test_helpers_are_not_named_like_tests() -> None:
    """A `test_*.py` file holds tests; shared helpers are named for what they provide (ui_support.py, gitrepo.py)."""
    tests_folder = Path(__file__).parent
    without_tests = []
    for path in sorted(tests_folder.rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        if not any(isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_")
                   and node.col_offset in (0, 4) for node in ast.walk(tree)):
            without_tests.append(path.relative_to(tests_folder).as_posix())
    assert without_tests == []


def module_level_imports(root: Path, package: str) -> dict[str, set[str]]:
    """Module -> the package's modules it imports when it is imported (not under `if TYPE_CHECKING:`, not in functions)."""
    modules = {".".join((package, *path.relative_to(root).with_suffix("").parts)).removesuffix(".__init__"): path
               for path in root.rglob("*.py")}

    def targets(body: list[ast.stmt], name: str) -> Iterator[str]:
        for node in body:
            if isinstance(node, ast.If):
                if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                    yield from targets(node.body, name)
                yield from targets(node.orelse, name)
            elif isinstance(node, ast.Try):
                for block in (node.body, node.orelse, node.finalbody, *(handler.body for handler in node.handlers)):
                    yield from targets(block, name)
            elif isinstance(node, ast.Import):
                yield from (alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = name.split(".")
                    parts = parts[: len(parts) - node.level + (modules[name].name == "__init__.py")]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                yield base
                yield from (f"{base}.{alias.name}" for alias in node.names)

    return {name: {target for target in targets(ast.parse(path.read_text(encoding="utf-8")).body, name)
                   if target in modules and target != name} for name, path in modules.items()}


def cycle_through(graph: dict[str, set[str]], start: str) -> list[str] | None:
    """An import path from `start` back to itself, or None."""
    seen: set[str] = set()
    paths = [[start]]
    while paths:
        path = paths.pop()
        for target in sorted(graph[path[-1]]):
            if target == start:
                return [*path, start]
            if target not in seen:
                seen.add(target)
                paths.append([*path, target])
    return None


def test_catalog_and_recipes_have_no_module_level_import_cycle() -> None:
    graph = module_level_imports(CORE.parent, "tui_agent")
    ours = [name for name in graph if name.startswith(("tui_agent.core.catalog.", "tui_agent.core.recipes."))]
    assert len(ours) > 20 and "tui_agent.core.catalog.pipeline" in graph["tui_agent.core.catalog.api"]
    assert [cycle for name in ours if (cycle := cycle_through(graph, name))] == []


def test_the_cycle_check_finds_a_cycle_and_skips_type_checking_imports(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("from pkg.b import B\n")
    (tmp_path / "b.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.c import C\nB = 1\n")
    (tmp_path / "c.py").write_text("from pkg import a\n")
    graph = module_level_imports(tmp_path, "pkg")
    assert cycle_through(graph, "pkg.a") is None
    (tmp_path / "b.py").write_text("from .c import C\n")
    assert cycle_through(module_level_imports(tmp_path, "pkg"), "pkg.a") == ["pkg.a", "pkg.b", "pkg.c", "pkg.a"]


def test_no_ui_module_but_the_app_imports_the_app() -> None:
    """The UI's controllers get the app as `ui.host.UIHost` (or a Protocol extending it), never TuiAgentApp: only
    ui/app.py itself and the CLI's launch (ui/launch.py) import the app module."""
    package = CORE.parent
    allowed = {"ui/app.py", "ui/launch.py"}
    importers = []
    for path in package.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = imported_modules(path) | {f"{node.module}.{alias.name}" for node in ast.walk(tree)
                                          if isinstance(node, ast.ImportFrom) and node.module for alias in node.names}
        if any(name == "tui_agent.ui.app" or name.startswith("tui_agent.ui.app.") for name in names) \
                or any(isinstance(node, ast.Name) and node.id == "TuiAgentApp" for node in ast.walk(tree)):
            importers.append(str(path.relative_to(package)))
    assert "ui/app.py" in importers and sorted(set(importers) - allowed) == []


HOST_REACH = {"conversation", "prompt_area", "catalog_pane", "diff_pane", "screen_stack", "screen", "focused", "query_one",
              "post_message", "call_from_thread", "refresh_bindings"}
"""What a controller must not reach through the host: widgets, the screens, and Textual's own messaging."""
CONTROLLERS = ("turn", "catalog_sync", "catalog_actions", "catalog_care", "slash_commands", "slash_undo", "slash_commit",
               "palette", "prompt_completion", "shell_prompt", "everyday_actions", "app_keys", "trust_switch",
               "context_usage", "runtime_ready", "runtime_lifecycle", "redo")


def host_reaches(source: str) -> list[str]:
    """`host.X` / `app.X` / `self.host.X` accesses with X in HOST_REACH (the names controllers give their UIHost)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in HOST_REACH:
            owner = node.value
            if (isinstance(owner, ast.Name) and owner.id in ("host", "app")) or \
                    (isinstance(owner, ast.Attribute) and owner.attr == "host"):
                found.append(f"{ast.unparse(node)}:{node.lineno}")
    return found


def test_controllers_reach_no_widget_through_the_host() -> None:
    """The controllers get the conversation and the prompt box as ConversationView / PromptBox, from the app and only
    where they render into them; through the host they only notify, ask, show a pane, refresh the catalog, run work."""
    ui = CORE.parent / "ui"
    app_side = {"app", "launch", "modal", "panes"}  # the app itself, and its helpers given Textual's App (ask_modal, PaneLayout)
    modules = {path.stem for path in ui.glob("*.py")} - app_side
    assert set(CONTROLLERS) <= modules
    reaches = {name: host_reaches((ui / f"{name}.py").read_text(encoding="utf-8")) for name in sorted(modules)}
    assert {name: found for name, found in reaches.items() if found} == {}
    assert sorted(host_reaches("async def f(host, app, self):\n    host.conversation.add(1)\n    app.prompt_area.text\n    self.host.screen_stack\n")) \
        == ["app.prompt_area:3", "host.conversation:2", "self.host.screen_stack:4"]


def test_the_host_protocols_have_no_widget_typed_member() -> None:
    """UIHost (and the Protocols extending it) name no widget, screen stack or message posting: what a controller may
    ask for is an intent (notify, ask, show a pane, refresh the catalog), the runtime, or the session's shared state."""
    ui = CORE.parent / "ui"
    widgets = ("Widget", "Conversation", "PromptArea", "CatalogPane", "DiffPane", "TextArea", "Input", "Screen[Any]",
               "Screen[object]", "Message")
    offenders = []
    for path in ui.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ClassDef) and any(ast.unparse(base) in ("UIHost", "Protocol") for base in node.bases)):
                continue
            if not (node.name == "UIHost" or any(ast.unparse(base) == "UIHost" for base in node.bases)):
                continue
            for member in node.body:
                if isinstance(member, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    name, typed = member.name, ast.unparse(member.returns) if member.returns else ""
                elif isinstance(member, ast.AnnAssign) and isinstance(member.target, ast.Name):
                    name, typed = member.target.id, ast.unparse(member.annotation)
                else:
                    continue
                if name in HOST_REACH or any(re.search(rf"\b{re.escape(widget)}(?![\w\[])" if "[" not in widget
                                                       else re.escape(widget), typed) for widget in widgets):
                    offenders.append(f"{path.name}:{node.name}.{name} -> {typed}")
    assert offenders == []


def test_the_entry_window_knows_nothing_of_events_or_streaming() -> None:
    """The conversation pane's two layers stay apart: widgets/entry_window.py (which entries have widgets, sliding,
    following) imports no core event, transcript fold or streaming widget; widgets/conversation.py folds events live."""
    widgets = CORE.parent / "ui" / "widgets"
    window = imported_modules(widgets / "entry_window.py")
    assert "tui_agent.ui.transcript" in window  # (the scan sees its imports)
    assert sorted(name for name in window if name in ("tui_agent.core.events", "tui_agent.ui.widgets.streaming",
                                                      "tui_agent.ui.widgets.conversation")) == []
    assert "tui_agent.ui.widgets.entry_window" in imported_modules(widgets / "conversation.py")


def test_code_outside_the_sandbox_imports_only_its_public_names() -> None:
    """The sandbox package is one part with a small surface (`tui_agent.core.sandbox.__all__`): no module outside it
    imports one of its modules, and every name imported from it is a public one."""
    import tui_agent.core.sandbox as sandbox

    sandbox_dir = CORE / "sandbox"
    wrong = []
    for path in CORE.parent.rglob("*.py"):
        if sandbox_dir in path.parents:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tui_agent.core.sandbox."):
                wrong.append(f"{path.relative_to(CORE.parent)}:{node.lineno} imports {node.module}")
            elif isinstance(node, ast.ImportFrom) and node.module == "tui_agent.core.sandbox":
                wrong += [f"{path.relative_to(CORE.parent)}:{node.lineno} imports {alias.name}" for alias in node.names
                          if alias.name not in sandbox.__all__]
            elif isinstance(node, ast.Import):
                wrong += [f"{path.relative_to(CORE.parent)}:{node.lineno} imports {alias.name}" for alias in node.names
                          if alias.name.startswith("tui_agent.core.sandbox.")]
    assert wrong == []
    assert len(sandbox.__all__) <= 25 and all(getattr(sandbox, name) is not None for name in sandbox.__all__)
