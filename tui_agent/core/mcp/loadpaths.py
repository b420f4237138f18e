"""Where a server's interpreter loads project code from besides the files its command line names: the project root's
importable modules for `python -m` / `-c` (the working directory comes first on the import path), the project
virtualenv it runs from (its interpreter, a script in its `bin/`, `uv run`), and the node_modules folders node resolves
from the server's folders up to the project root."""

from __future__ import annotations

import os
from pathlib import Path

VENV_MARK = "pyvenv.cfg"
NODE_COMMANDS = frozenset({"node", "nodejs", "npx", "npm", "pnpm", "yarn", "bun", "bunx", "deno", "tsx", "ts-node"})
NODE_SUFFIXES = (".js", ".mjs", ".cjs", ".ts", ".mts", ".cts")
IMPORTABLE_SUFFIXES = (".py", ".pyc", ".pyw", ".so", ".pyd")
"""Files the import system loads as modules (sources, sourceless bytecode, extension modules of any ABI tag)."""


def inside(path: Path, top: Path) -> bool:
    return path == top or str(path).startswith(str(top) + os.sep)


def venv_of(path: Path, top: Path) -> Path | None:
    """The project virtualenv (a folder holding pyvenv.cfg) that `path` lies in, if any."""
    folder = path if path.is_dir() else path.parent
    while folder != top and inside(folder, top):
        if (folder / VENV_MARK).is_file():
            return folder
        folder = folder.parent
    return None


def runs_root_modules(args: tuple[str, ...] | list[str], modules: list[str]) -> bool:
    """`python -m NAME` or `python -c CODE`: the working directory (the project root) is first on the import path."""
    return bool(modules) or "-c" in args


def dependency_folders(command: str, args: tuple[str, ...] | list[str], code: list[Path], top: Path) -> list[Path]:
    """The project's dependency folders the command loads code from: a virtualenv its interpreter or script lives in
    (or `uv run`'s `.venv`), and for a node command every node_modules from a code folder up to the project root."""
    found: list[Path] = []
    launcher = Path(os.path.abspath(command if os.path.isabs(command) else top / command))
    venv = venv_of(launcher, top) if inside(launcher, top) and launcher.exists() else None
    if venv is not None:
        found.append(venv)
    if Path(command).name == "uv" and "run" in args:
        found += [folder / ".venv" for folder in (top, *code) if (folder / ".venv" / VENV_MARK).is_file()]
    if Path(command).name in NODE_COMMANDS or any(str(word).endswith(NODE_SUFFIXES) for word in args):
        for start in (top, *code):
            folder = start if start.is_dir() else start.parent
            while inside(folder, top):
                modules = folder / "node_modules"
                if modules.is_dir():  # a link among them is followed or refused by the walk
                    found.append(modules)
                if folder == top:
                    break
                folder = folder.parent
    return sorted(set(found))


def bytecode_folder() -> Path:
    """Where started servers keep their Python bytecode (PYTHONPYCACHEPREFIX): outside the project, so a planted
    `__pycache__` file stamped like a pinned source is never loaded in its place."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tuiagent" / "mcp-bytecode"


def server_environment(configured: dict[str, str]) -> dict[str, str]:
    """The environment given to a server over the SDK's default one: the bytecode folder, then what was approved."""
    return {"PYTHONPYCACHEPREFIX": str(bytecode_folder()), **configured}
