"""What agent code must never see: secret files under the home directory, secret-looking environment variables, and
the host folders bubblewrap hides behind an empty tmpfs (homes, and the folders where the host keeps its sockets)."""

from __future__ import annotations

import os
import re
from pathlib import Path

SECRET_HOME_PATHS: tuple[str, ...] = (
    ".ssh", ".aws", ".gnupg", ".netrc", ".git-credentials", ".config/gh", ".config/hub", ".docker/config.json",
    ".kube", ".password-store", ".local/share/keyrings", ".local/share/gopass", ".config/gopass", ".config/op",
    ".config/gcloud", ".azure", ".npmrc", ".pypirc", ".gem/credentials", ".vault-token",
    ".cargo/credentials", ".cargo/credentials.toml", ".config/git/credentials", ".pki",
    ".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware", ".config/microsoft-edge",
    ".config/vivaldi", ".config/opera", ".var/app",
)
"""Secret files and folders (relative to the home directory): keys, credentials, password stores, browser profiles."""

SECRET_ENV_NAME = re.compile(
    r"(TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_?KEY|API_?KEY|ACCESS_?KEY|_KEY$|^KEY$|_AUTH$|^AUTH_|COOKIE)",
    re.IGNORECASE,
)
"""Variable names that may hold a secret (`ANTHROPIC_API_KEY`, `*_TOKEN`, `*_KEY`, `*_SECRET`, passwords ...)."""

HOST_SOCKET_FOLDERS = ("/run", "/var/run", "/var/tmp", "/tmp")
"""Where a host keeps its sockets (D-Bus, Docker, ssh-agent, gpg-agent, tmux, systemd): hidden by bubblewrap, with
$XDG_RUNTIME_DIR, whether or not the run has the network."""


def is_secret_env_name(name: str) -> bool:
    return bool(SECRET_ENV_NAME.search(name))


def is_inside(path: Path, folder: Path) -> bool:
    """`path` is `folder` or lies under it (both absolute and normalized; compared as text, pathlib is slow here)."""
    inner, outer = str(path), str(folder)
    return inner == outer or inner.startswith(outer if outer.endswith("/") else outer + "/")


class SecretMap:
    """The secret paths under one home, with their real locations, computed once per look-up session."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.real_home = Path(os.path.realpath(home))
        self.pairs = [(home / relative, Path(os.path.realpath(home / relative))) for relative in SECRET_HOME_PATHS]

    def existing(self) -> list[Path]:
        return [secret for secret, _real in self.pairs if secret.exists() or secret.is_symlink()]

    def under(self, folder: Path) -> list[Path]:
        """The existing secret paths inside `folder` (to be masked when `folder` is made visible)."""
        found: list[Path] = []
        for secret, real in self.pairs:
            if not (secret.exists() or secret.is_symlink()):
                continue
            for candidate in (secret, real):
                if is_inside(candidate, folder) and candidate not in found:
                    found.append(candidate)
        return found

    def touches(self, path: Path) -> bool:
        """True when `path` is a secret path, lies inside one, or is the home directory or one of its parents."""
        real = Path(os.path.realpath(path))
        if is_inside(self.real_home, real):
            return True
        return any(is_inside(real, secret_real) or is_inside(path, secret) for secret, secret_real in self.pairs)


def socket_folders() -> list[Path]:
    """The real paths of the host's socket folders, $XDG_RUNTIME_DIR included."""
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    extra = [runtime_dir] if runtime_dir and os.path.isabs(runtime_dir) else []
    return [Path(os.path.realpath(folder)) for folder in (*HOST_SOCKET_FOLDERS, *extra)]


def holds_socket_folder(path: Path) -> bool:
    """Whether binding `path` would show a whole socket folder: it is one, or holds one (/, /var, /run/user)."""
    real = Path(os.path.realpath(path))
    return any(is_inside(folder, real) for folder in socket_folders())


def in_socket_folder(path: Path) -> bool:
    """Whether `path` (resolved) is, holds or lies inside one of the host's socket folders."""
    real = Path(os.path.realpath(path))
    return any(is_inside(real, folder) or is_inside(folder, real) for folder in socket_folders())


def hiding_candidates() -> list[Path]:
    """What bubblewrap hides behind an empty tmpfs where it exists: homes, /tmp and the folders holding host sockets."""
    return [Path("/root"), Path("/home"), Path(os.path.expanduser("~")), *socket_folders()]


def outermost(paths: list[Path]) -> list[Path]:
    """The existing `paths` resolved, but / and those inside another."""
    unique: list[Path] = []
    for path in paths:
        resolved = path.resolve() if path.exists() else None
        if resolved is None or resolved == Path("/") or any(is_inside(resolved, folder) for folder in unique):
            continue
        unique = [folder for folder in unique if not is_inside(folder, resolved)] + [resolved]
    return unique
