"""Where a host keeps what the sandbox never shows, whatever a config or a virtualenv asks: its socket folders."""

from __future__ import annotations

import os
from pathlib import Path

HOST_SOCKET_FOLDERS = ("/run", "/var/run", "/var/tmp", "/tmp")
"""Where a host keeps its sockets (D-Bus, Docker, ssh-agent, gpg-agent, tmux, systemd): hidden by bubblewrap, with
$XDG_RUNTIME_DIR, whether or not the run has the network."""


def socket_folders() -> list[Path]:
    """The real paths of the host's socket folders, $XDG_RUNTIME_DIR included."""
    folders = [Path(folder) for folder in HOST_SOCKET_FOLDERS]
    runtime_dir = os.environ.get("XDG_RUNTIME_DIR")
    if runtime_dir and os.path.isabs(runtime_dir):
        folders.append(Path(runtime_dir))
    return [Path(os.path.realpath(folder)) for folder in folders]


def in_socket_folder(path: Path) -> bool:
    """Whether `path` (resolved) is, holds or lies inside one of the host's socket folders."""
    real = Path(os.path.realpath(path))
    for folder in socket_folders():
        if real == folder or folder in real.parents or real in folder.parents:
            return True
    return False


def holds_socket_folder(path: Path) -> bool:
    """Whether binding `path` would show a whole socket folder: it is one, or holds one (/, /var, /run/user)."""
    real = Path(os.path.realpath(path))
    return any(real == folder or real in folder.parents for folder in socket_folders())
