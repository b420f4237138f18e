"""openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, as projectfs uses it where the kernel has it: real folders,
real links; a link anywhere on the way or at the end, or a way out, is refused by the kernel, and projectfs still
names the link (its walk gives the message)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from tui_agent.core import openat2, projectfs

pytestmark = pytest.mark.skipif(not openat2.AVAILABLE, reason="openat2 is tried on Linux x86_64/aarch64 only")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    (root / "a" / "b").mkdir(parents=True)
    (root / "a" / "b" / "f.txt").write_text("inside\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("SECRET\n")
    (root / "linked").symlink_to(outside)
    (root / "a" / "last.txt").symlink_to(outside / "f.txt")
    (root / "a" / "near").symlink_to("b")
    return root


def opened(root: Path, relative: str) -> bytes:
    folder = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd = openat2.open_beneath(folder, relative, os.O_RDONLY | os.O_CLOEXEC)
    finally:
        os.close(folder)
    with os.fdopen(fd, "rb") as handle:
        return handle.read()


def test_a_plain_path_beneath_opens(tree: Path) -> None:
    assert opened(tree, "a/b/f.txt") == b"inside\n"


@pytest.mark.parametrize(("relative", "code"), [("linked/f.txt", errno.ELOOP), ("a/last.txt", errno.ELOOP),
                                                ("a/near/f.txt", errno.ELOOP), ("../outside/f.txt", errno.EXDEV),
                                                ("/etc/hostname", errno.EXDEV)])
def test_a_link_or_a_way_out_is_refused_by_the_kernel(tree: Path, relative: str, code: int) -> None:
    with pytest.raises(OSError) as refused:
        opened(tree, relative)
    assert refused.value.errno == code


def test_projectfs_opens_through_openat2_and_still_names_a_refused_link(tree: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real = openat2.open_beneath

    def counted(dir_fd: int, relative: str, flags: int, mode: int = 0) -> int:
        calls.append(relative)
        return real(dir_fd, relative, flags, mode)

    monkeypatch.setattr(openat2, "open_beneath", counted)
    agent = tree / ".agent"
    (agent / "runs").mkdir(parents=True)
    (agent / "runs" / "log.jsonl").write_text("line\n")
    assert projectfs.read_bytes(agent / "runs" / "log.jsonl") == b"line\n"
    assert calls == [".agent/runs/log.jsonl"]
    (agent / "cache").symlink_to(tree.parent / "outside")
    with pytest.raises(projectfs.LinkRefused, match=r"\.agent/cache is a symbolic link \(to .*outside\)"):
        projectfs.read_bytes(agent / "cache" / "f.txt")
    assert not (tree.parent / "outside" / "new").exists()
    with pytest.raises(projectfs.LinkRefused):
        projectfs.append(agent / "cache" / "new", b"x")
    assert not (tree.parent / "outside" / "new").exists()
