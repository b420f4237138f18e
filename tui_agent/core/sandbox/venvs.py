"""Which virtualenv the sandbox may use, and what its interpreter exposes: never one git tracks (a repository's
committed `venv/` is the attacker's), never an interpreter `home` that is not a real Python installation or lies
where the sandbox hides things (/tmp, /run: sockets and private files)."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

from tui_agent.core.versioning.plainfiles import git_tracks

from tui_agent.core.sandbox.secrets import in_socket_folder, is_inside

PYTHON_NAMES = ("python3", "python")




def is_own_environment(venv: Path) -> bool:
    """True when `venv` is the virtualenv tuiagent itself runs from (activated to start it): never the project's."""
    return sys.prefix != sys.base_prefix and os.path.realpath(venv) == os.path.realpath(sys.prefix)


def refusal(root: Path, venv: Path) -> str | None:
    """Why the virtualenv at `venv` must not be used, or None."""
    if git_tracks(root, venv):
        return f"{venv} is tracked by git (a committed virtualenv runs the repository's own programs); not used"
    real, real_root = Path(os.path.realpath(venv)), Path(os.path.realpath(root))
    inside = is_inside(Path(os.path.abspath(venv)), Path(os.path.abspath(root)))
    if inside and not is_inside(real, real_root) and in_socket_folder(real):
        # A link in the project (agent code can make one) to /tmp or /run; the person's own VIRTUAL_ENV may be anywhere.
        return f"{venv} leads to {real}, where the sandbox hides the host's sockets and private files; not used"
    return None


def project_venvs(root: Path, used: Path | None) -> list[Path]:
    """Every virtualenv inside the project (resolved), used or not (`used`: the toolchain's): each is kept
    read-only in writable runs, and its start-up files are checked after them."""
    real_root = Path(os.path.realpath(root))
    candidates = [root / ".venv", root / "venv", *([used] if used is not None else [])]
    found: list[Path] = []
    for candidate in candidates:
        real = Path(os.path.realpath(candidate))
        if (real / "pyvenv.cfg").is_file() and is_inside(real, real_root) and real != real_root and real not in found:
            found.append(real)
    return found


def interpreter_home(venv: Path) -> Path | None:
    """The `home = …/bin` folder of pyvenv.cfg, as written (None when absent or unreadable)."""
    try:
        for line in (venv / "pyvenv.cfg").read_text(encoding="utf-8").splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home" and value.strip():
                return Path(value.strip())
    except (OSError, UnicodeDecodeError):
        return None
    return None


def real_python_prefix(home: Path, user_home: Path | None = None) -> Path | None:
    """The prefix of the Python installation `home` names, or None when it is not one: `home` must hold an
    executable python3/python and its prefix a lib/python3.* folder, and neither may be in a host socket folder
    (unless inside the person's own home, as pyenv's are)."""
    def hidden_place(path: Path) -> bool:
        own = user_home is not None and is_inside(Path(os.path.realpath(path)), Path(os.path.realpath(user_home)))
        return in_socket_folder(path) and not own

    if not home.is_absolute() or hidden_place(home):
        return None
    executables = [home / name for name in PYTHON_NAMES]
    if not any(path.is_file() and os.access(path, os.X_OK) for path in executables):
        return None
    prefix = Path(os.path.realpath(home)).parent
    if hidden_place(prefix):
        return None
    try:
        has_stdlib = any(entry.name.startswith("python3") and entry.is_dir() for entry in (prefix / "lib").iterdir())
    except OSError:
        return None
    return prefix if has_stdlib else None


def programs_from_venv(command: str, search_path: Sequence[str], venv: Path | None, root: Path | None = None) -> list[str]:
    """A note for each program `command` runs from the project's virtualenv rather than from the system (paths
    inside `root` shown relative to it)."""
    if venv is None:
        return []
    venv_bin = Path(venv) / "bin"
    notes: list[str] = []
    for name in _program_names(command):
        found = _which(name, search_path)
        if found is None or found.parent != venv_bin:
            continue
        system = _which(name, [entry for entry in search_path if Path(entry) != venv_bin])
        instead = f"instead of {system}" if system is not None else "(not installed on the system)"
        shown = os.path.relpath(found, root) if root is not None and is_inside(found, root) else str(found)
        notes.append(f"`{name}` runs {shown} from the project's virtualenv, {instead}")
    return notes


def _program_names(command: str) -> list[str]:
    """The first word of each simple command (after VAR=value assignments), best effort."""
    names: list[str] = []
    for chunk in command.replace("\n", ";").replace("&&", ";").replace("||", ";").replace("|", ";").split(";"):
        try:
            words = shlex.split(chunk)
        except ValueError:
            words = chunk.split()
        words = [word for word in words if not ("=" in word and not word.startswith("="))][:1]
        if words and "/" not in words[0] and words[0] not in names:
            names.append(words[0])
    return names


def _which(name: str, search_path: Sequence[str]) -> Path | None:
    for entry in search_path:
        candidate = Path(entry) / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None
