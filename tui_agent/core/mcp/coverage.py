"""Which project files an MCP server's approval covers: every file it can load, found from its command line.

A server runs outside the sandbox, so its approval pins what it runs by content. A script or code folder named on
the command line (`python srv/server.py`, `node srv/index.js`, `uv run --directory srv server.py`, `npx ./srv`;
PACKAGE_MARKS) covers the whole folder tree it lives in: a script's own folder (Python puts it first on the import
path), widened to the topmost package folder (with `__init__.py`) holding it; a script at the project root covers the
whole project. A module (`python -m pkg.sub`) covers its top-level package found under the project root or `src/`
(or the `pkg.py` file there); and `-m` or `-c` also covers every module importable from the project root (the
working directory comes first on the import path): IMPORTABLE_SUFFIXES files at the root and in folders named like
modules. The dependency folders it runs from (loadpaths.py: a project virtualenv, node_modules) are pinned whole.
Under a covered folder every regular file counts, except in folders no server loads from as code of the project:
hidden ones at the root (`.git`, `.venv`, `.agent`, caches) and repositories and caches below it (HIDDEN_NOT_CODE), `__pycache__` (servers get their bytecode outside the project:
PYTHONPYCACHEPREFIX, so a planted one is never read), `node_modules` and virtualenvs (pinned only as the dependency
folders of a server that uses them); a file named in one of those (`.venv/bin/mcp-server`) is pinned alone.
A linked folder is walked where it leads when that is inside the project (its files pinned under their own path);
one leading out of the project is refused, as is a folder over MAX_FILES files or MAX_BYTES bytes (dependency
folders: MAX_DEPENDENCY_FILES, MAX_DEPENDENCY_BYTES): never half pinned, the approval then cannot be given."""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core.mcp import digestcache
from tui_agent.core.mcp.loadpaths import (
    IMPORTABLE_SUFFIXES,
    VENV_MARK,
    dependency_folders,
    inside,
    runs_root_modules,
)
from tui_agent.core.textsafety import escaped

MAX_FILES = 2000
MAX_BYTES = 50_000_000
MAX_DEPENDENCY_FILES = 30_000
MAX_DEPENDENCY_BYTES = 1_000_000_000
CODE, DEPENDENCY, IMPORTABLE = "code", "dependency", "importable"
"""Walk kinds: a code folder tree, a dependency folder (pinned whole), the modules importable from the root."""
SKIPPED_FOLDERS = frozenset({"__pycache__", "node_modules"})
"""Folder names never walked into (besides hidden ones and virtualenvs): caches and installed dependencies."""
HIDDEN_NOT_CODE = frozenset({".git", ".hg", ".svn", ".cache", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".hypothesis",
                             ".tox", ".nox", ".idea", ".vscode"})
"""Hidden folders below the root that hold a repository or a tool's cache, never a server's code."""
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
    uncopied: frozenset[str] = frozenset()
    """Files of dependency folders: pinned by digest, no copy kept at approval (a change shows them whole)."""

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
    """The digest, remembered by the file's identity and times (digestcache.py): a dependency folder is read once."""
    with path.open("rb") as handle:
        key = digestcache.key_of(path, os.fstat(handle.fileno()), limit)
        known = digestcache.recall(key) if key is not None else None
        if known is not None:
            return known
        digest = hashlib.sha256()
        digest.update(handle.read(limit + 1))
    if key is not None:
        digestcache.remember(key, digest.hexdigest())
    return digest.hexdigest()


def coverage(command: str, args: tuple[str, ...] | list[str], root: Path) -> Coverage:
    """Every project file the server started by `command args` (from the project root) can load."""
    top = Path(os.path.realpath(root))
    words = _paths_named(command, args)
    named = [Path(os.path.abspath(word if os.path.isabs(word) else top / word)) for word in words]
    folders = [path for path in named if path != top and inside(path, top) and path.is_dir() and not path.is_symlink()]
    targets = [folder for folder in folders if any((folder / mark).exists() for mark in PACKAGE_MARKS)]
    bases = [top, *folders]  # `uv run --directory srv server.py`: words may be relative to a folder named too
    for word in words:
        for base in bases:
            path = Path(os.path.abspath(word if os.path.isabs(word) else base / word))
            if inside(path, top) and path.is_file():
                targets.append(path if _installed(path, top) else _script_folder(path, top))
    modules = _modules_named(args)
    for module in modules:
        for base in bases:
            found = _module_path(module, base)
            if found is not None:
                targets.append(found if found.is_dir() else _script_folder(found, top))
    walks = [(target, CODE) for target in sorted(set(targets))]
    if runs_root_modules(args, modules):
        walks += [(base, IMPORTABLE) for base in bases]  # `uv run --directory srv -m x` runs from srv/
    walks += [(folder, DEPENDENCY) for folder in dependency_folders(command, args, targets, top)]
    return _walk_all(walks, top)


def _installed(path: Path, top: Path) -> bool:
    """A file inside a virtualenv or node_modules of the project (`.venv/bin/python`): pinned alone, not its folder."""
    folder = path.parent
    while folder != top and inside(folder, top):
        if folder.name in SKIPPED_FOLDERS or (folder / VENV_MARK).exists():
            return True
        folder = folder.parent
    return False


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


def _walk_all(walks: list[tuple[Path, str]], top: Path) -> Coverage:
    walker = _Walker(top)
    for folder, kind in walks:
        walker.walk(folder, kind)
        if walker.refusal is not None:
            break
    found = Coverage(sources=[_shown(folder, top, kind) for folder, kind in walks], refusal=walker.refusal)
    if found.refusal is None:
        found.files = [(name, file_digest(path)) for name, path in sorted(walker.seen.items())]
        found.uncopied = frozenset(walker.dependency_files)
        digestcache.save()
    return found


class _Walker:
    """Collects the covered files of each walk (named by their path in the project) and the first refusal."""

    def __init__(self, top: Path) -> None:
        self.top = top
        self.seen: dict[str, Path] = {}
        self.dependency_files: set[str] = set()
        self.walked: set[tuple[Path, str]] = set()
        self.totals = {CODE: [0, 0], DEPENDENCY: [0, 0]}
        self.refusal: str | None = None

    def walk(self, folder: Path, kind: str) -> None:
        if folder.is_symlink() and folder.is_dir():
            self._linked(folder, kind)
            return
        if folder.is_file():
            self._add(folder, kind)
            return
        real = Path(os.path.realpath(folder))
        if (real, kind) in self.walked:
            return
        self.walked.add((real, kind))
        for current, dirs, files in os.walk(folder, followlinks=False):
            base = Path(current)
            for name in list(dirs):
                child = base / name
                entered = _enters(name, child, kind, at_root=base == self.top)
                if child.is_symlink() or not entered:
                    dirs.remove(name)
                if child.is_symlink() and entered:
                    self._linked(child, kind)
            for name in files:
                if kind != IMPORTABLE or name.endswith(IMPORTABLE_SUFFIXES):
                    self._add(base / name, kind)
            if self.refusal is not None:
                return

    def _linked(self, link: Path, kind: str) -> None:
        """A linked folder: walked where it leads inside the project (the link pinned too), refused leading out."""
        real = Path(os.path.realpath(link))
        if not inside(real, self.top):
            shown = escaped(link.relative_to(self.top).as_posix())
            self.refusal = self.refusal or (
                f"{shown} is a symbolic link to a folder outside the project ({escaped(os.readlink(link))}): an "
                f"approval cannot pin what it holds; put the folder itself in the project")
            return
        self._add(link, kind)
        self.walk(real, kind)

    def _add(self, path: Path, kind: str) -> None:
        try:
            info = path.lstat()
        except OSError:
            return
        if not (stat.S_ISREG(info.st_mode) or stat.S_ISLNK(info.st_mode)):
            return
        name = path.relative_to(self.top).as_posix()
        if name in self.seen:
            return
        self.seen[name] = path
        budget = DEPENDENCY if kind == DEPENDENCY else CODE
        if budget == DEPENDENCY:
            self.dependency_files.add(name)
        totals = self.totals[budget]
        totals[0] += 1
        totals[1] += info.st_size if stat.S_ISREG(info.st_mode) else 0
        most_files, most_bytes = (MAX_DEPENDENCY_FILES, MAX_DEPENDENCY_BYTES) if budget == DEPENDENCY else (MAX_FILES, MAX_BYTES)
        if self.refusal is None and (totals[0] > most_files or totals[1] > most_bytes):
            self.refusal = (f"too large to pin (more than {most_files} files or {most_bytes // 1_000_000} MB"
                            + TOO_LARGE_ADVICE[kind])


TOO_LARGE_ADVICE = {
    CODE: "); move the server's files into a folder of their own",
    IMPORTABLE: " of modules importable from its working directory); start it as a script (`python srv/server.py`): "
                "only the script's folder is on its import path",
    DEPENDENCY: " of dependencies); install the server's dependencies outside the project (a global install, uvx, "
                "npx -y)",
}


def _enters(name: str, folder: Path, kind: str, *, at_root: bool) -> bool:
    """Whether a walk of `kind` goes into the child folder `name` (`at_root`: a child of the project root)."""
    if kind == DEPENDENCY:
        return name != "__pycache__"
    venv = (folder / VENV_MARK).exists()
    if kind == IMPORTABLE:
        return name.isidentifier() and name not in SKIPPED_FOLDERS and not venv
    if name.startswith("."):  # below the root a hidden folder is the server's own (`sys.path.append(".lib")`)
        return not at_root and name not in HIDDEN_NOT_CODE and not venv
    return not (name in SKIPPED_FOLDERS or venv)


def _shown(folder: Path, top: Path, kind: str) -> str:
    shown = "the project root (./)" if folder == top else folder.relative_to(top).as_posix() + ("" if folder.is_file() else "/")
    if kind == IMPORTABLE:
        return f"modules importable from {shown}"
    return f"{shown} (dependencies)" if kind == DEPENDENCY else shown
