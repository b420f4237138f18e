"""Content hashes of the catalog's files remembered by their stat, so a warm start reads and hashes only what changed.

Kept in `.agent/cache/file-hashes.json`, read through projectfs and checked entry by entry (agent code on a weak
sandbox tier could have written it). A file is known by (device, inode, size, mtime_ns, ctime_ns): any write or
rename changes its ctime, which no unprivileged program can set back, so a forged or stale entry only ever matches
the file it was made for. Files changed within `SETTLED_NS` of being read are not remembered (a second write in the
same clock tick would keep all five)."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import stat
import time
from dataclasses import dataclass
from pathlib import Path

from tui_agent.core import projectfs

CACHE_NAME = "file-hashes.json"
FORMAT = 1
SETTLED_NS = 2_000_000_000
MAX_ENTRIES = 20_000
"""More entries than this are not loaded (a hostile file cannot make a start slow)."""
Fingerprint = tuple[int, int, int, int, int]
_SHA256 = re.compile(r"[0-9a-f]{64}")
_SHA1 = re.compile(r"[0-9a-f]{40}")


@dataclass(frozen=True)
class Known:
    """What a file held when it had a given fingerprint: its sha256 (the catalog's id) and its git blob id."""

    source_sha: str
    blob_sha: str


def fingerprint(info: os.stat_result) -> Fingerprint:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def hashes_of(data: bytes) -> Known:
    return Known(hashlib.sha256(data).hexdigest(), hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest())


def scan(folder: Path) -> dict[str, Fingerprint]:
    """File name -> fingerprint of every regular file in `folder` (opened with no link followed; a link inside is
    left out: it is never taken from the cache). Empty when the folder cannot be opened."""
    try:
        fd = projectfs.open_dir(folder)
    except OSError:
        return {}
    prints: dict[str, Fingerprint] = {}
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISREG(info.st_mode):
                    prints[entry.name] = fingerprint(info)
    except OSError:
        return {}
    finally:
        os.close(fd)
    return prints


def read_with_fingerprint(path: Path) -> tuple[bytes, Fingerprint | None]:
    """A regular file's bytes (through projectfs: a link raises LinkRefused) and its fingerprint, or None for the
    fingerprint when the file changed while it was read or changed too recently to be remembered."""
    started = time.time_ns()
    fd = projectfs.open_file(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        before = os.fstat(fd)
        if stat.S_ISDIR(before.st_mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(before.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        data = handle.read()
        after = fingerprint(os.fstat(fd))
    settled = max(before.st_mtime_ns, before.st_ctime_ns) < started - SETTLED_NS
    return data, after if settled and after == fingerprint(before) and len(data) == before.st_size else None


class FileHashes:
    """The remembered hashes of one project: `known` answers from them, `remember` adds, `save` writes them back."""

    def __init__(self, root: Path, entries: dict[str, tuple[Fingerprint, Known]] | None = None) -> None:
        self.root = root
        self.entries = dict(entries or {})
        self.changed = False

    @classmethod
    def load(cls, root: Path, cache_dir: Path) -> FileHashes:
        """The hashes remembered under `cache_dir`; none when the file is missing, a link or malformed (checked
        entry by entry: a bad entry is dropped, the others kept)."""
        try:
            raw = projectfs.read_or_none(cache_dir / CACHE_NAME)
        except OSError:
            raw = None
        return cls(root, parse(raw) if raw is not None else {})

    def _key(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    def known(self, path: Path, print_: Fingerprint | None) -> Known | None:
        """The hashes of `path` when it still has the fingerprint they were remembered with."""
        if print_ is None:
            return None
        found = self.entries.get(self._key(path))
        return found[1] if found is not None and found[0] == print_ else None

    def remember(self, path: Path, print_: Fingerprint | None, known: Known) -> None:
        if print_ is None:
            return
        key = self._key(path)
        if self.entries.get(key) != (print_, known):
            self.entries[key] = (print_, known)
            self.changed = True

    def intact(self, path: Path, sha: str, print_: Fingerprint | None) -> bool:
        """Whether the regular file at `path` holds content hashing to `sha`: from the remembered hashes when its
        fingerprint (`print_`, from `scan`) is unchanged, else read and hashed (and remembered)."""
        known = self.known(path, print_)
        if known is not None:
            return known.source_sha == sha
        try:
            data, read_print = read_with_fingerprint(path)
        except OSError:
            return False
        hashes = hashes_of(data)
        self.remember(path, read_print, hashes)
        return hashes.source_sha == sha

    def keep_only(self, keys: set[str]) -> None:
        """Forget files no longer there (`keys`: the paths, relative to the root, still worth remembering)."""
        gone = set(self.entries) - keys
        for key in gone:
            del self.entries[key]
        self.changed = self.changed or bool(gone)

    def save(self, cache_dir: Path) -> None:
        """Write the hashes back when they changed (a cache: a failure to write is not an error)."""
        if not self.changed:
            return
        files = {key: [*print_, known.source_sha, known.blob_sha] for key, (print_, known) in sorted(self.entries.items())}
        try:
            projectfs.write_atomic(cache_dir / CACHE_NAME, json.dumps({"format": FORMAT, "files": files}).encode(), sync=False)
            self.changed = False
        except OSError:  # a cache: a start that cannot write it hashes the files again next time, nothing is lost
            pass


def parse(raw: bytes) -> dict[str, tuple[Fingerprint, Known]]:
    """The entries of a hashes file that are shaped as written: five non-negative integers and two hex ids under
    a plain relative path; anything else is dropped."""
    try:
        document = json.loads(raw)
    except ValueError:
        return {}
    if not isinstance(document, dict) or document.get("format") != FORMAT or not isinstance(document.get("files"), dict):
        return {}
    files = document["files"]
    if len(files) > MAX_ENTRIES:
        return {}
    entries: dict[str, tuple[Fingerprint, Known]] = {}
    for key, value in files.items():
        if not _plain_key(key) or not isinstance(value, list) or len(value) != 7:
            continue
        numbers, (source, blob) = value[:5], value[5:]
        if not all(type(n) is int and n >= 0 for n in numbers):
            continue
        if not (isinstance(source, str) and _SHA256.fullmatch(source) and isinstance(blob, str) and _SHA1.fullmatch(blob)):
            continue
        entries[key] = ((numbers[0], numbers[1], numbers[2], numbers[3], numbers[4]), Known(source, blob))
    return entries


def _plain_key(key: object) -> bool:
    return (isinstance(key, str) and bool(key) and "\0" not in key and not key.startswith("/")
            and ".." not in key.split("/"))
