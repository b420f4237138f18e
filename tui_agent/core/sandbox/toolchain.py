"""The project's toolchain inside the sandbox: PATH, the project's virtualenv, read-only toolchain folders, build
variables, found once per session, and what agent code must never see of it: secret files under the home directory
(never bound, masked inside a visible folder) and secret-looking environment variables. The virtualenv is never one git tracks (a repository's committed `venv/` is the
attacker's), nor one whose interpreter `home` is not a real Python installation or lies where the sandbox hides
things (/tmp, /run: sockets and private files)."""

from __future__ import annotations

import base64
import hashlib
import os
import re
import shlex
import shutil
import sys
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tui_agent.core.versioning.plainfiles import git_tracks

from tui_agent.core.sandbox.launch import SYSTEM_PATH, HostMounts, host_mounts, is_inside, socket_folders

SECRET_HOME_PATHS: tuple[str, ...] = (
    ".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".config/gh", ".config/hub", ".docker/config.json",
    ".kube", ".password-store", ".local/share/keyrings", ".local/share/gopass", ".config/gopass", ".config/op",
    ".config/gcloud", ".azure", ".npmrc", ".pypirc", ".gem/credentials", ".vault-token", ".config/git/credentials", ".pki",
    ".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware", ".config/microsoft-edge",
    ".config/vivaldi", ".config/opera", ".var/app",
)
"""Secret files and folders (relative to the home directory): keys, credentials, password stores, browser profiles."""

SECRET_ENV_NAME = re.compile(
    r"(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_?KEY|API_?KEY|ACCESS_?KEY|_KEY$|^KEY$|_AUTH$|^AUTH_|COOKIE)",
    re.IGNORECASE,
)
"""Variable names that may hold a secret (`ANTHROPIC_API_KEY`, `*_TOKEN`, `*_KEY`, `*_SECRET`, passwords ...)."""

TOOLCHAIN_HOME_DIRS: tuple[str, ...] = (
    ".pyenv", ".nvm", ".cargo", ".rustup", "go", ".local/bin", ".local/lib", ".local/share/pipx", ".local/pipx",
    ".local/share/uv", ".rbenv", ".volta", ".bun", ".deno", ".sdkman", ".asdf",
)
"""Folders under the home directory that hold toolchains (the rest of the home stays hidden)."""

TOOL_HOME_VARIABLES: dict[str, str] = {
    "CARGO_HOME": ".cargo", "RUSTUP_HOME": ".rustup", "PYENV_ROOT": ".pyenv", "NVM_DIR": ".nvm", "GOPATH": "go",
    "PYTHONUSERBASE": ".local",
}
"""Set to the real folder when it exists and the user has not set them: inside, HOME is a private empty folder."""

TOOLCHAIN_SECRETS: dict[str, tuple[str, ...]] = {
    ".cargo": ("credentials", "credentials.toml", "config", "config.toml"), ".nvm": ("versions/node/*/etc/npmrc",),
    ".volta": ("tools/image/node/*/etc/npmrc",), ".asdf": ("installs/nodejs/*/etc/npmrc",),
    ".local/share/uv": ("credentials",),
}
"""Registry tokens inside toolchain folders bound whole, relative to the folder (under the home, or where its variable
of TOOL_HOME_VARIABLES says): cargo's credentials and config (`[registry] token`), npm's global npmrc in each node
prefix (`_authToken`), uv's stored credentials. Masked as the secret home paths are: whole, settings included."""

BUILD_ENV_NAMES: tuple[str, ...] = (
    "LANG", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "CI",
    "USER", "LOGNAME", "SHELL", "CC", "CXX", "CPP", "LD", "AR", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS",
    "LIBRARY_PATH", "LD_LIBRARY_PATH", "CPATH", "C_INCLUDE_PATH", "PKG_CONFIG_PATH", "CMAKE_PREFIX_PATH",
    "CMAKE_GENERATOR", "MAKEFLAGS", "JAVA_HOME", "GOROOT", "GOPATH", "GOFLAGS", "GO111MODULE", "GOTOOLCHAIN",
    "CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS", "CARGO_TARGET_DIR", "PYENV_ROOT", "PYENV_VERSION",
    "NVM_DIR", "NVM_BIN", "NODE_PATH", "NODE_ENV", "PYTHONPATH", "PYTHONUTF8", "UV_PROJECT_ENVIRONMENT",
    "UV_PYTHON", "POETRY_VIRTUALENVS_PATH", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
)
"""Variables a build or a test run commonly needs; `[sandbox] env` in .agent/config.toml adds more names."""

PRIVATE_AREAS = (Path("/tmp"), Path("/root"), Path("/home"))
"""/tmp (agent sockets live there) and homes other than the user's stay private whatever the config says."""


class SecretMap:
    """The secret paths under one home and in its toolchain folders (`env`: where TOOL_HOME_VARIABLES put them), with
    their real locations, computed once per look-up session."""

    def __init__(self, home: Path, env: Mapping[str, str]) -> None:
        self.home = home
        self.real_home = Path(os.path.realpath(home))
        paths = [home / relative for relative in SECRET_HOME_PATHS]
        for folder, names in TOOLCHAIN_SECRETS.items():
            places = {home / folder, *(Path(env[name]) for name, relative in TOOL_HOME_VARIABLES.items()
                                       if relative == folder and os.path.isabs(env.get(name, "")))}
            paths += [path for place in places for name in names
                      for path in (place.glob(name) if "*" in name else [place / name])]
        self.pairs = [(path, Path(os.path.realpath(path))) for path in paths]

    def existing(self) -> list[tuple[Path, Path]]:
        """The secret paths that exist, each with its real location."""
        return [(secret, real) for secret, real in self.pairs if secret.exists() or secret.is_symlink()]

    def touches(self, path: Path) -> bool:
        """True when `path` is a secret path, lies inside one, or is the home directory or one of its parents."""
        real = Path(os.path.realpath(path))
        if is_inside(self.real_home, real):
            return True
        return any(is_inside(real, secret_real) or is_inside(path, secret) for secret, secret_real in self.pairs)


@dataclass(frozen=True)
class Toolchain:
    """What agent code sees of the user's toolchain; `read_only` folders are bound read-only with `masked` hidden,
    `mounts` says so to bubblewrap (with the host folders it hides)."""

    home: Path
    path: tuple[str, ...]
    env: dict[str, str]
    read_only: tuple[Path, ...]
    masked: tuple[Path, ...]
    mounts: HostMounts
    venv: Path | None = None
    withheld_secrets: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    def describe(self, *, paths_hidden: bool = True) -> dict[str, Any]:
        """Visible and hidden, for `tuiagent sandbox status` (variable names only, never values).

        `paths_hidden` False (the rlimits tier, no mount namespace): the secret paths are listed as readable.
        """
        hidden = [str(secret) for secret, _real in SecretMap(self.home, self.env).existing()]
        return {
            "secret_paths_hidden": paths_hidden,
            "visible": {
                "PATH": list(self.path),
                "virtualenv": str(self.venv) if self.venv else None,
                "read_only_folders": [str(path) for path in self.read_only],
                "variables": sorted(self.env),
            },
            "hidden": {
                "secret_paths": hidden,
                "masked_inside_visible_folders": [str(path) for path in self.masked],
                "secret_variables": list(self.withheld_secrets),
                "other_variables": "every variable not listed as visible (allow-list by name)",
            },
            "problems": list(self.problems),
        }


def discover(project_root: Path, *, environ: Mapping[str, str] | None = None, extra_env: Iterable[str] = (),
             extra_paths: Iterable[str] = (), project_venv: bool = True) -> Toolchain:
    """The toolchain of `project_root` for the user whose environment is `environ` (default: this process').

    `project_venv` False (a project not trusted yet): no virtualenv inside the project is used or put on PATH."""
    env_in = dict(os.environ if environ is None else environ)
    home = Path(os.path.abspath(os.path.expanduser(env_in.get("HOME") or "~")))
    problems: list[str] = []
    venv = find_virtualenv(project_root, env_in, home, problems, project_venv=project_venv)
    env = passed_variables(env_in, extra_env, problems)
    env.update({name: str(home / relative) for name, relative in TOOL_HOME_VARIABLES.items()
                if name not in env and (home / relative).is_dir()})
    secrets = SecretMap(home, env)
    if venv is not None:
        env["VIRTUAL_ENV"] = str(venv)
    path = search_path(env_in.get("PATH", ""), venv, secrets)
    if not project_venv:
        path = [entry for entry in path if not is_inside(Path(entry), project_root)]
    folders = toolchain_folders(home, path, venv, env, project_root)
    folders += configured_folders(extra_paths, secrets, project_root, problems)
    read_only = list(dict.fromkeys(folder for folder in folders if not secrets.touches(folder)))
    existing = secrets.existing()  # each visible folder's secrets are masked, the link and its target alike
    masked = list(dict.fromkeys(path for folder in read_only for pair in existing for path in pair
                                if is_inside(path, folder)))
    withheld = tuple(sorted(name for name in env_in if SECRET_ENV_NAME.search(name)))
    return Toolchain(home, tuple(path), env, tuple(read_only), tuple(masked), host_mounts(project_root, read_only, masked),
                     venv, withheld, tuple(problems))


def passed_variables(environ: Mapping[str, str], extra: Iterable[str], problems: list[str]) -> dict[str, str]:
    """The allow-listed variables present in `environ`; a secret-looking name is never passed, even when configured."""
    names = list(BUILD_ENV_NAMES)
    for name in extra:
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
            problems.append(f"[sandbox] env: {name!r} is not a variable name")
        elif SECRET_ENV_NAME.search(name):
            problems.append(f"[sandbox] env: {name} looks like a secret (token, key, password) and is never passed")
        else:
            names.append(name)
    return {name: value for name, value in environ.items()
            if (name in names or name.startswith("LC_")) and not SECRET_ENV_NAME.search(name)}


def search_path(user_path: str, venv: Path | None, secrets: SecretMap) -> list[str]:
    """The project's virtualenv first, then the user's PATH entries (tuiagent's own virtualenv left out), then
    tuiagent's interpreter and the system folders."""
    entries: list[str] = [str(venv / "bin")] if venv is not None else []
    for entry in user_path.split(os.pathsep):
        if entry and os.path.isabs(entry) and os.path.isdir(entry) and not secrets.touches(Path(entry)):
            if not is_own_environment(Path(entry).parent):  # tuiagent's own, activated: after the person's
                entries.append(entry)
    entries += [str(Path(sys.executable).parent), *SYSTEM_PATH]
    return list(dict.fromkeys(entries))


def find_virtualenv(root: Path, environ: Mapping[str, str], home: Path, problems: list[str], *,
                    project_venv: bool) -> Path | None:
    """The project's virtualenv: uv's UV_PROJECT_ENVIRONMENT, .venv, venv, poetry's, then an active VIRTUAL_ENV.

    One git tracks, or one lying in a host socket folder, is refused (`problems` says so); with `project_venv`
    False none inside the project is used."""
    candidates: list[Path] = []
    if environ.get("UV_PROJECT_ENVIRONMENT"):
        candidates.append(root / os.path.expanduser(environ["UV_PROJECT_ENVIRONMENT"]))
    candidates += [root / ".venv", root / "venv"]
    candidates += poetry_virtualenvs(root, environ, home)
    if environ.get("VIRTUAL_ENV") and not is_own_environment(Path(environ["VIRTUAL_ENV"])):
        candidates.append(Path(environ["VIRTUAL_ENV"]))
    for candidate in candidates:
        if not ((candidate / "pyvenv.cfg").is_file() and (candidate / "bin").is_dir()):
            continue
        if not project_venv and is_inside(Path(os.path.realpath(candidate)), Path(os.path.realpath(root))):
            continue
        reason = refusal(root, candidate)
        if reason is None:
            return Path(os.path.abspath(candidate))
        problems.append(reason)
    return None


def poetry_virtualenvs(root: Path, environ: Mapping[str, str], home: Path) -> list[Path]:
    """Poetry's environments of this project (`<name>-<hash>-py*` in its virtualenvs folder)."""
    try:
        data = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):  # ValueError: TOMLDecodeError, too long a number
        return []
    poetry = data.get("tool", {}).get("poetry", {}) if isinstance(data.get("tool"), dict) else {}
    project = data.get("project", {})
    name = (poetry.get("name") if isinstance(poetry, dict) else None) or (project.get("name") if isinstance(project, dict) else None)
    if not isinstance(name, str) or not name:
        return []
    sanitized = re.sub(r'[ $`!*@"\\\r\n\t]', "_", name.lower())[:42]
    digest = hashlib.sha256(os.path.normcase(os.path.realpath(root)).encode()).digest()
    prefix = f"{sanitized}-{base64.urlsafe_b64encode(digest).decode()[:8]}-py"
    folder = Path(environ.get("POETRY_VIRTUALENVS_PATH") or home / ".cache" / "pypoetry" / "virtualenvs")
    try:
        return sorted((entry for entry in folder.iterdir() if entry.name.startswith(prefix)), reverse=True)
    except OSError:
        return []


def toolchain_folders(home: Path, path: list[str], venv: Path | None, env: Mapping[str, str], root: Path) -> list[Path]:
    """Folders to make visible: the known toolchain folders, PATH entries, the virtualenv and its interpreter."""
    folders = [home / relative for relative in TOOLCHAIN_HOME_DIRS if (home / relative).is_dir()]
    folders += [Path(entry) for entry in path]
    if venv is not None:
        folders.append(venv)
        base = venv_base(venv, home)
        if base is not None and base.is_dir():
            folders.append(base)
    for name in TOOL_HOME_VARIABLES:
        if name in env and os.path.isabs(env[name]):
            # The user base also holds app data (keyrings, Trash): only its programs and packages are needed.
            folders += [Path(env[name], "bin"), Path(env[name], "lib")] if name == "PYTHONUSERBASE" else [Path(env[name])]
    return [candidate for folder in folders for candidate in (folder, Path(os.path.realpath(folder)))
            if candidate.is_dir() and not is_inside(candidate, root) and candidate != home]


def configured_folders(paths: Iterable[str], secrets: SecretMap, root: Path, problems: list[str]) -> list[Path]:
    """`[sandbox] paths` of .agent/config.toml: absolute or `~/…` folders; secrets and the home itself refused."""
    home = secrets.home
    folders: list[Path] = []
    for raw in paths:
        if not isinstance(raw, str) or not raw.strip():
            problems.append(f"[sandbox] paths: {raw!r} is not a path")
            continue
        expanded = Path(str(home) + raw[1:] if raw.startswith("~") else raw)
        if not expanded.is_absolute():
            problems.append(f"[sandbox] paths: {raw!r} must be absolute or start with ~/")
        elif not expanded.exists():
            problems.append(f"[sandbox] paths: {raw!r} does not exist")
        elif secrets.touches(expanded):
            problems.append(f"[sandbox] paths: {raw!r} is (or holds) the home folder or a secret; refused")
        elif exposes(expanded, PRIVATE_AREAS, home):
            problems.append(f"[sandbox] paths: {raw!r} is in /tmp or another user's home (sockets, keys); refused")
        elif not is_inside(expanded, root):
            folders.append(Path(os.path.abspath(expanded)))
    return folders


def exposes(path: Path, areas: Iterable[Path], spared: Path) -> bool:
    """Whether `path` (resolved) is, holds or lies inside one of `areas` (resolved) while not inside `spared`."""
    real = Path(os.path.realpath(path))
    if is_inside(real, Path(os.path.realpath(spared))):
        return False
    return any(is_inside(real, area) or is_inside(area, real) for area in areas)


def is_own_environment(venv: Path) -> bool:
    """True when `venv` is the virtualenv tuiagent itself runs from (activated to start it): never the project's."""
    return sys.prefix != sys.base_prefix and os.path.realpath(venv) == os.path.realpath(sys.prefix)


def refusal(root: Path, venv: Path) -> str | None:
    """Why the virtualenv at `venv` must not be used, or None."""
    if git_tracks(root, venv):
        return f"{venv} is tracked by git (a committed virtualenv runs the repository's own programs); not used"
    inside = is_inside(Path(os.path.abspath(venv)), Path(os.path.abspath(root)))
    if inside and exposes(venv, socket_folders(), root):
        # A link in the project (agent code can make one) to /tmp or /run; the person's own VIRTUAL_ENV may be anywhere.
        return f"{venv} leads to {os.path.realpath(venv)}, where the sandbox hides the host's sockets and private files; not used"
    return None


def venv_base(venv: Path, user_home: Path) -> Path | None:
    """The prefix of the Python installation a virtualenv was made from (`home = …/bin` in its pyvenv.cfg), or None
    when it is not one: `home` must hold an executable python3/python and its prefix a lib/python3.* folder, and
    neither may be in a host socket folder (unless inside the person's own home, as pyenv's are)."""
    try:
        lines = (venv / "pyvenv.cfg").read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    home = next((Path(value.strip()) for key, _, value in (line.partition("=") for line in lines)
                 if key.strip() == "home" and value.strip()), None)
    if home is None or not home.is_absolute() or exposes(home, socket_folders(), user_home):
        return None
    if not any(path.is_file() and os.access(path, os.X_OK) for path in (home / "python3", home / "python")):
        return None
    prefix = Path(os.path.realpath(home)).parent
    if exposes(prefix, socket_folders(), user_home):
        return None
    try:
        has_stdlib = any(entry.name.startswith("python3") and entry.is_dir() for entry in (prefix / "lib").iterdir())
    except OSError:
        return None
    return prefix if has_stdlib else None


def programs_from_venv(command: str, search_path: Sequence[str], venv: Path | None, root: Path) -> list[str]:
    """A note for each program `command` runs from the project's virtualenv rather than from the system (paths
    inside `root` shown relative to it)."""
    if venv is None:
        return []
    venv_bin = venv / "bin"
    notes: list[str] = []
    for name in _program_names(command):
        found = _which(name, search_path)
        if found is None or found.parent != venv_bin:
            continue
        system = _which(name, [entry for entry in search_path if Path(entry) != venv_bin])
        instead = f"instead of {system}" if system is not None else "(not installed on the system)"
        shown = os.path.relpath(found, root) if is_inside(found, root) else str(found)
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
    found = shutil.which(name, path=os.pathsep.join(search_path))
    return Path(found) if found is not None else None
