"""Which project files an MCP server's approval covers: every file it can load, found from its command line.

A server runs outside the sandbox, so its approval pins what it runs by content. A script or code folder named on
the command line (`python srv/server.py`, `node srv/index.js`, `uv run --directory srv server.py`, `npx ./srv`;
PACKAGE_MARKS) covers the whole folder tree it lives in: a script's own folder (Python puts it first on the import path), widened to the
topmost package folder (with `__init__.py`) holding it; a script at the project root covers the whole project. A
module (`python -m pkg.sub`) covers its top-level package found under the project root or `src/` (or the
`pkg.py` file there); an installed one covers nothing, and one appearing in the project later changes the pin.
Under a covered folder every regular file counts, except in folders no server loads from as code of the project:
hidden ones (`.git`, `.venv`, `.agent`, caches), `__pycache__`, `node_modules` and virtualenvs (a `pyvenv.cfg`); a
file named in one of those (`.venv/bin/mcp-server`) is pinned alone.
A folder over MAX_FILES files or MAX_BYTES bytes is refused (never half pinned): the approval then cannot be given."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

MAX_FILES = 2000
MAX_BYTES = 50_000_000
SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules"})
"""Folder names never walked into (besides hidden ones and virtualenvs): caches and installed dependencies."""
VENV_MARK = "pyvenv.cfg"
MODULE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*")
PACKAGE_MARKS = ("package.json", "pyproject.toml", "setup.py", "__init__.py", "__main__.py", "index.js")
"""A folder named on the command line counts as code (`npx ./srv`) when it holds one of these; otherwise it is taken
for data the server serves (`server-filesystem ./docs`), and the project root itself never counts as a folder named."""
MODULE_ROOTS = ("", "src")
"""Where `python -m NAME` finds a project package: the working directory (the project root) and `src/`."""


@dataclass
class Coverage:
    """The covered files as (project-relative path, sha256) sorted by path, the folders or files they came from,
    and why the approval cannot cover them (None when it can)."""

    files: list[tuple[str, str]] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    refusal: str | None = None

    def summary(self) -> str:
        """"srv/ (3 files, sha256 1a2b3c4d5e6f)" for a grant or an approval's line."""
        if self.refusal is not None:
            return f"{', '.join(self.sources)}: {self.refusal}"
        total = hashlib.sha256(repr(self.files).encode()).hexdigest()[:12]
        return f"{', '.join(self.sources)} ({len(self.files)} files, sha256 {total})"


def file_digest(path: Path, limit: int = MAX_BYTES) -> str:
    """The sha256 of a file's content; a symlink is pinned by where it points and what it points to."""
    try:
        if path.is_symlink():
            target = hashlib.sha256(os.readlink(path).encode()).hexdigest()
            return f"symlink {target} to " + (_content_digest(path, limit) if path.is_file() else "no file")
        return _content_digest(path, limit)
    except OSError as error:
        return f"unreadable: {error.strerror}"


def _content_digest(path: Path, limit: int) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        digest.update(handle.read(limit + 1))
    return digest.hexdigest()


def coverage(command: str, args: tuple[str, ...] | list[str], root: Path) -> Coverage:
    """Every project file the server started by `command args` (from the project root) can load."""
    top = Path(os.path.realpath(root))
    words = _paths_named(command, args)
    named = [Path(os.path.abspath(word if os.path.isabs(word) else top / word)) for word in words]
    folders = [path for path in named if path != top and _inside(path, top) and path.is_dir() and not path.is_symlink()]
    targets = [folder for folder in folders if any((folder / mark).exists() for mark in PACKAGE_MARKS)]
    bases = [top, *folders]  # `uv run --directory srv server.py`: words may be relative to a folder named too
    for word in words:
        for base in bases:
            path = Path(os.path.abspath(word if os.path.isabs(word) else base / word))
            if _inside(path, top) and path.is_file():
                targets.append(path if _installed(path, top) else _script_folder(path, top))
    for module in _modules_named(args):
        for base in bases:
            found = _module_path(module, base)
            if found is not None:
                targets.append(found if found.is_dir() else _script_folder(found, top))
    return _walk_all(sorted(set(targets)), top)


def _installed(path: Path, top: Path) -> bool:
    """A file inside a virtualenv or node_modules of the project (`.venv/bin/python`): pinned alone, not its folder."""
    folder = path.parent
    while folder != top and _inside(folder, top):
        if folder.name in SKIPPED_FOLDERS or (folder / VENV_MARK).exists():
            return True
        folder = folder.parent
    return False


def _inside(path: Path, top: Path) -> bool:
    return path == top or str(path).startswith(str(top) + os.sep)


def _paths_named(command: str, args: tuple[str, ...] | list[str]) -> list[str]:
    words = []
    for word in (command, *args):
        candidate = word.split("=", 1)[1] if word.startswith("-") and "=" in word else word
        if candidate and not candidate.startswith("-"):
            words.append(candidate)
    return words


def _modules_named(args: tuple[str, ...] | list[str]) -> list[str]:
    """NAME of each `-m NAME`, `-mNAME` or `--module NAME` (python's, uv run's)."""
    names = []
    for index, word in enumerate(args):
        if word in ("-m", "--module") and index + 1 < len(args):
            names.append(args[index + 1])
        elif word.startswith("-m") and len(word) > 2 and not word.startswith("--"):
            names.append(word[2:])
        elif word.startswith("--module="):
            names.append(word.split("=", 1)[1])
    return [name for name in names if MODULE_NAME.fullmatch(name)]


def _module_path(module: str, base: Path) -> Path | None:
    head = module.split(".")[0]
    for where in MODULE_ROOTS:
        folder = base / where / head if where else base / head
        if folder.is_dir() and not folder.is_symlink():
            return folder
        if (folder.parent / f"{head}.py").is_file():
            return folder.parent / f"{head}.py"
    return None


def _script_folder(script: Path, top: Path) -> Path:
    """The folder a script imports from: its own, widened to the topmost package folder holding it."""
    folder = script.parent
    while folder != top and folder.parent != top and (folder.parent / "__init__.py").is_file():
        folder = folder.parent
    return folder


def _walk_all(folders: list[Path], top: Path) -> Coverage:
    found = Coverage(sources=[_shown(folder, top) for folder in folders])
    seen: dict[str, Path] = {}
    total = 0
    for folder in folders:
        for path in _walk(folder):
            name = path.relative_to(top).as_posix()
            if name in seen:
                continue
            seen[name] = path
            total += _size(path)
            if len(seen) > MAX_FILES or total > MAX_BYTES:
                found.refusal = (f"too large to pin (more than {MAX_FILES} files or {MAX_BYTES // 1_000_000} MB); "
                                 f"move the server's files into a folder of their own")
                return found
    found.files = [(name, file_digest(path)) for name, path in sorted(seen.items())]
    return found


def _size(path: Path) -> int:
    try:
        info = path.lstat()
    except OSError:
        return 0
    return info.st_size if stat.S_ISREG(info.st_mode) else 0


def _shown(folder: Path, top: Path) -> str:
    if folder == top:
        return "the project root (./)"
    return folder.relative_to(top).as_posix() + ("" if folder.is_file() else "/")


def _walk(folder: Path) -> list[Path]:
    """Regular files and symlinks under `folder`, skipping SKIPPED_FOLDERS, hidden folders and virtualenvs; a symlinked folder is pinned as a link, never entered (a file: itself)."""
    if folder.is_file():
        return [folder]
    found: list[Path] = []
    for current, dirs, files in os.walk(folder, followlinks=False):
        base = Path(current)
        for name in list(dirs):
            child = base / name
            if child.is_symlink():
                found.append(child)
            if child.is_symlink() or name.startswith(".") or name in SKIPPED_FOLDERS or (child / VENV_MARK).exists():
                dirs.remove(name)
        for name in files:
            path = base / name
            try:
                mode = path.lstat().st_mode
            except OSError:
                continue
            if stat.S_ISREG(mode) or stat.S_ISLNK(mode):
                found.append(path)
    return found
