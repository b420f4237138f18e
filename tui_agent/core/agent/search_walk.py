"""The search tools' fallback when ripgrep is not installed: a walk honouring .gitignore/.ignore, globs, file types."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tui_agent.core import projectfs

if TYPE_CHECKING:  # pathspec loads with the first search that needs this walk (no `rg`), not with the agent
    import pathspec

IGNORE_FILES = (".gitignore", ".ignore", ".rgignore")  # in rg's order of precedence, lowest first

# rg's own type table for the common languages (`rg --type-list`); an unknown name is refused with this list.
FILE_TYPES: dict[str, tuple[str, ...]] = {
    "py": ("*.py", "*.pyi"), "js": ("*.js", "*.jsx", "*.mjs", "*.cjs", "*.vue"), "ts": ("*.ts", "*.tsx", "*.cts", "*.mts"),
    "rust": ("*.rs",), "go": ("*.go",), "java": ("*.java", "*.jsp", "*.jspx", "*.properties"), "c": ("*.c", "*.h", "*.H"),
    "cpp": ("*.C", "*.cc", "*.cpp", "*.cxx", "*.c++", "*.h", "*.hh", "*.hpp", "*.hxx", "*.inl"), "cs": ("*.cs",),
    "rb": ("*.rb", "Gemfile", "*.gemspec", "Rakefile"), "php": ("*.php",), "swift": ("*.swift",), "kotlin": ("*.kt", "*.kts"),
    "sh": ("*.sh", "*.bash", "*.zsh", ".bashrc", ".zshrc", ".profile"), "md": ("*.md", "*.markdown", "*.mdx"),
    "markdown": ("*.md", "*.markdown", "*.mdx"), "json": ("*.json", "*.jsonl", "*.geojson"), "toml": ("*.toml", "Cargo.lock"),
    "yaml": ("*.yaml", "*.yml"), "html": ("*.html", "*.htm", "*.xhtml"), "css": ("*.css", "*.scss", "*.sass", "*.less"),
    "sql": ("*.sql",), "txt": ("*.txt",), "xml": ("*.xml", "*.xsd", "*.xsl", "*.svg"), "make": ("Makefile", "*.mk", "*.mak"),
    "docker": ("Dockerfile", "*.dockerfile", "Dockerfile.*"), "lua": ("*.lua",), "scala": ("*.scala", "*.sbt"),
    "rst": ("*.rst",), "ini": ("*.ini", "*.cfg"),
}


def expand_braces(glob: str) -> list[str]:
    """`*.{ts,tsx}` -> [`*.ts`, `*.tsx`] (rg's globs know braces, gitignore patterns do not)."""
    match = re.search(r"\{([^{}]*)\}", glob)
    if match is None:
        return [glob]
    head, tail = glob[: match.start()], glob[match.end():]
    return [expanded for option in match.group(1).split(",") for expanded in expand_braces(head + option + tail)]


def _spec(lines: list[str]) -> pathspec.GitIgnoreSpec:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines(lines)


def glob_spec(globs: list[str]) -> tuple[pathspec.GitIgnoreSpec, pathspec.GitIgnoreSpec]:
    """The include and exclude specs of rg-style `--glob` values (a leading `!` excludes)."""
    include = [item for glob in globs if not glob.startswith("!") for item in expand_braces(glob)]
    exclude = [item for glob in globs if glob.startswith("!") for item in expand_braces(glob[1:])]
    return _spec(include), _spec(exclude)


@dataclass(frozen=True)
class _Rules:
    base: str  # the folder (relative to the root, "" for the root) whose ignore files these are
    spec: pathspec.GitIgnoreSpec


def _read_rules(root: Path, relative: str) -> _Rules | None:
    lines: list[str] = []
    folder = f"{relative}/" if relative else ""
    for name in IGNORE_FILES:
        lines.extend(_ignore_lines(root, folder + name))
    if not relative:
        lines = _ignore_lines(root, ".git/info/exclude") + lines
    return _Rules(relative, _spec(lines)) if lines else None


def _ignore_lines(root: Path, relative: str) -> list[str]:
    """An ignore file's lines; none when it is missing, unreadable, or a link leading out of the project (never read:
    a committed `.gitignore -> ~/.ssh/id_rsa` is not opened on the host)."""
    try:
        data = projectfs.read_or_none(projectfs.beneath(root, Path(relative)))
    except OSError:
        return []
    return data.decode("utf-8", errors="replace").splitlines() if data is not None else []


def _ignored(stack: list[_Rules], relative: str, is_dir: bool) -> bool:
    """Whether the deepest ignore file with a pattern for this path ignores it (a `!pattern` un-ignores). As in rg, a
    path is matched for itself: a match it only inherits from its folder does not count (the walk prunes ignored
    folders, so it is inside one only when it was asked to search there)."""
    for rules in reversed(stack):
        inner = relative[len(rules.base) + 1:] if rules.base else relative
        result = rules.spec.check_file(inner + "/" if is_dir else inner)
        if result.include is None:
            continue
        parent = inner.rpartition("/")[0]
        if result.include and parent and rules.spec.check_file(parent + "/").include:
            continue
        return bool(result.include)
    return False


def walk_files(root: Path, start: str, excluded: pathspec.GitIgnoreSpec, included: pathspec.GitIgnoreSpec) -> Iterator[str]:
    """Project-relative paths of the regular files under `start` that rg would search: hidden files included, ignored
    ones and `excluded` left out, symlinks never followed, folders pruned as soon as they are ignored. As in rg, a file
    that `included` names is searched even when an ignore file names it (a folder ignored is still not entered)."""
    start = "" if start in ("", ".") else start.strip("/")
    stack: list[_Rules] = []
    folders = [""] + [start[:i] for i in range(len(start)) if start[i] == "/"] + ([start] if start else [])
    for folder in dict.fromkeys(folders):
        rules = _read_rules(root, folder)
        if rules is not None:
            stack.append(rules)
    yield from _walk(root, start, stack, excluded, included)


def _walk(root: Path, relative: str, stack: list[_Rules], excluded: pathspec.GitIgnoreSpec,
          included: pathspec.GitIgnoreSpec) -> Iterator[str]:
    try:
        entries = sorted(os.scandir(root / relative if relative else root), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        path = f"{relative}/{entry.name}" if relative else entry.name
        if entry.is_symlink():
            continue
        is_dir = entry.is_dir(follow_symlinks=False)
        if is_dir and entry.name == ".git":
            continue
        if excluded.match_file(path + "/" if is_dir else path):
            continue
        chosen = not is_dir and bool(included.patterns) and included.match_file(path)
        if not chosen and _ignored(stack, path, is_dir):
            continue
        if is_dir:
            rules = _read_rules(root, path)
            yield from _walk(root, path, stack + [rules] if rules else stack, excluded, included)
        elif entry.is_file(follow_symlinks=False):
            yield path


def type_spec(name: str) -> pathspec.GitIgnoreSpec:
    globs = FILE_TYPES.get(name)
    if globs is None:
        raise KeyError(name)
    return _spec(list(globs))
