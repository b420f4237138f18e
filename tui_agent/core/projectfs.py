"""The one door to project files on the host: opens walked one folder at a time, no link followed in `.agent/`."""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tui_agent.core import openat2
from tui_agent.core.errors import TuiAgentError
from tui_agent.core.textsafety import escaped

AGENT_PART = ".agent"
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC

REFUSES = ("tuiagent's own reads and writes under the project go through it: no symbolic link and no '..' inside "
           ".agent/ is followed (audit log, sessions, state.db, caches, records, config), the file tools refuse a link "
           "leading out of the project, and drift compares a linked dependency by its target text; each refusal "
           "names the link")
"""What this door refuses, in words (`tuiagent sandbox status` lists it among the host doors)."""


class LinkRefused(TuiAgentError, OSError):
    """A symbolic link (or `..`) on the way that tuiagent will not follow; `str()` names it and where it leads."""

    def __init__(self, message: str, path: str) -> None:
        super().__init__(errno.ELOOP, message, path)
        self.message = message

    def __str__(self) -> str:
        return self.message


def _state_home() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "tuiagent" / "projects"


def anchor_of(path: Path) -> tuple[Path, tuple[str, ...], str]:
    """Where a walk to `path` starts (the folder holding `.agent/`, the outside-state home, or the parent), the
    parts walked from it, and the prefix shown before them in a message."""
    path = path if path.is_absolute() else Path.cwd() / path  # not normalised: a `..` in .agent/ is refused
    parts = path.parts
    if AGENT_PART in parts:
        at = len(parts) - 1 - parts[::-1].index(AGENT_PART)
        return Path(*parts[:at]), parts[at:], ""
    home = Path(os.path.abspath(_state_home()))
    if path.is_relative_to(home) and path != home:
        return home, path.relative_to(home).parts, f"{home}/"
    return path.parent, (path.name,), f"{path.parent}/"


def _refusal(shown: str, target: str, verb: str, inside_agent: bool) -> LinkRefused:
    where = "in .agent/" if inside_agent else "leading out of the project"
    verb = verb if verb == "follows" else f"{verb} through"
    message = (f"refused: {escaped(shown)} is a symbolic link (to {escaped(target)}); "
               f"tuiagent never {verb} links {where}")
    return LinkRefused(message, shown)


def _check_link(dir_fd: int, name: str, shown: str, verb: str) -> None:
    """Raise LinkRefused when `name` in `dir_fd` is a symbolic link."""
    try:
        target = os.readlink(name, dir_fd=dir_fd)
    except OSError:
        return
    raise _refusal(shown, target, verb, AGENT_PART in Path(shown).parts)


def _walk(path: Path, *, create: bool, verb: str) -> tuple[int, str, str]:
    """A descriptor of `path`'s folder (no link followed from the anchor on), the last name, and its shown path."""
    anchor, parts, prefix = anchor_of(path)
    if not parts or any(part in ("", ".", "..") for part in parts):
        raise LinkRefused(f"refused: {escaped(str(path))} leads through '..'", str(path))
    fd = os.open(anchor, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    for index, part in enumerate(parts[:-1]):
        try:
            fd = _step(fd, part, prefix + "/".join(parts[: index + 1]), create=create, verb=verb)  # closes the old fd
        except OSError as error:
            raise _named(error, anchor.joinpath(*parts[: index + 1])) from None
    return fd, parts[-1], prefix + "/".join(parts)


def _named(error: OSError, path: Path) -> OSError:
    """`error` naming the whole path (an error from a `dir_fd=` call names only the last part)."""
    if isinstance(error, LinkRefused) or error.errno is None:
        return error
    return type(error)(error.errno, error.strerror, str(path))


def _step(fd: int, part: str, shown: str, *, create: bool, verb: str) -> int:
    try:
        try:
            inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except FileNotFoundError:
            if not create:
                raise
            try:
                os.mkdir(part, 0o755, dir_fd=fd)
            except FileExistsError:
                pass
            inner = os.open(part, _DIR_FLAGS, dir_fd=fd)
        except OSError as error:
            if error.errno in (errno.ELOOP, errno.ENOTDIR):
                _check_link(fd, part, shown, verb)
            if create and error.errno == errno.ENOTDIR:  # a file where a folder is made: as `mkdir -p` says it
                raise FileExistsError(errno.EEXIST, os.strerror(errno.EEXIST), shown) from None
            raise
    finally:
        os.close(fd)
    return inner


def open_file(path: Path, flags: int, mode: int = 0o644) -> int:
    """`os.open` of a file under the project or tuiagent's state, refusing any link on the way or at the end: one
    openat2 call where the kernel has it (openat2.py), else (or to name a refused link, or make missing folders) the
    walk one folder at a time."""
    fast = _open_beneath(path, flags, mode)
    if fast is not None:
        return fast
    verb = "writes" if flags & (os.O_WRONLY | os.O_RDWR) else "reads"
    folder, name, shown = _walk(path, create=bool(flags & os.O_CREAT), verb=verb)
    try:
        return os.open(name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=folder)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR, errno.EEXIST):
            _check_link(folder, name, shown, verb)
        raise _named(error, path) from None
    finally:
        os.close(folder)


def _open_beneath(path: Path, flags: int, mode: int) -> int | None:
    """The file opened by openat2 beneath its anchor with no link resolved; None when that fails for any reason."""
    anchor, parts, _prefix = anchor_of(path)
    if not parts or any(part in ("", ".", "..") for part in parts) or not openat2.AVAILABLE:
        return None
    try:
        anchor_fd = os.open(anchor, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return openat2.open_beneath(anchor_fd, "/".join(parts), flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode)
    except OSError:
        return None
    finally:
        os.close(anchor_fd)


def refuse_links(path: Path) -> None:
    """Raise LinkRefused when `path` or a folder on its way (from the anchor) is a link (for files opened by name,
    like sqlite's); a missing part is fine."""
    try:
        folder, name, shown = _walk(path, create=False, verb="opens")
    except FileNotFoundError:
        return
    try:
        _check_link(folder, name, shown, "opens")
    finally:
        os.close(folder)


def read_bytes(path: Path) -> bytes:
    """A regular file's bytes (a fifo or device is refused, never waited on)."""
    fd = open_file(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        kind = os.fstat(fd).st_mode
        if stat.S_ISDIR(kind):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
        if not stat.S_ISREG(kind):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        return handle.read()


def read_text(path: Path, errors: str = "strict") -> str:
    return read_bytes(path).decode("utf-8", errors=errors)


def read_or_none(path: Path) -> bytes | None:
    """The file's bytes; None when it (or a folder on its way) is missing or a folder. A link raises LinkRefused."""
    try:
        return read_bytes(path)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def read_regular(path: Path, limit: int) -> bytes | None:
    """The bytes of a regular file (never through a symlink, never blocking on a FIFO), None past `limit` bytes."""
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(handle).st_mode):
            return None
        chunks: list[bytes] = []
        total = 0
        while chunk := os.read(handle, 65536):
            chunks.append(chunk)
            total += len(chunk)
            if total > limit:
                return None
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(handle)


def move_into_place(source: Path, target: Path) -> None:
    """Put `source` at `target` in one step (a rename; across file systems a copy renamed into place)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.rename(source, target)
        return
    except OSError as error:
        if error.errno != errno.EXDEV:
            raise
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".run")
    os.close(handle)
    try:
        if source.is_symlink():
            os.unlink(temporary)
            os.symlink(os.readlink(source), temporary)
        else:
            shutil.copy2(source, temporary)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def move_under_git_lock(source: Path, target: Path) -> bool:
    """Put a run's version of a file in `.git` (the index, a ref) in place the way git does, through `<file>.lock`:
    False when a git command holds that lock now (its own rename would undo this one)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    lock = target.with_name(target.name + ".lock")
    try:
        handle = os.open(lock, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:
        return False
    try:
        with os.fdopen(handle, "wb") as out, open(source, "rb") as data:
            shutil.copyfileobj(data, out)
            os.fchmod(out.fileno(), stat.S_IMODE(os.lstat(source).st_mode))
        os.replace(lock, target)
    except BaseException:
        lock.unlink(missing_ok=True)
        raise
    return True


def make_dirs(path: Path) -> None:
    """`mkdir -p` with no link followed (a link on the way raises LinkRefused)."""
    os.close(open_dir(path, create=True))


def open_dir(path: Path, *, create: bool = False) -> int:
    folder, name, shown = _walk(path, create=create, verb="writes" if create else "reads")
    try:
        return _step(folder, name, shown, create=create, verb="writes" if create else "reads")
    except OSError as error:
        raise _named(error, path) from None


@contextmanager
def folder_of(path: Path, *, create: bool = True) -> Iterator[tuple[int, str]]:
    """The descriptor of `path`'s folder (walked with no link) and `path`'s name, which must not be a link either;
    the descriptor is closed after the block."""
    folder, name, shown = _walk(path, create=create, verb="writes")
    try:
        _check_link(folder, name, shown, "writes")
        yield folder, name
    finally:
        os.close(folder)


def umask() -> int:
    """The process's umask, read without changing it (another thread may be creating files)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    current = os.umask(0o022)
    os.umask(current)
    return current


def written_mode(path: Path | str) -> int:
    """The mode a file written at `path` gets: the one the file has (an update keeps it), else what the umask
    gives a new file (a temporary file from mkstemp is 0600 whatever the umask)."""
    try:
        return _mode_for(os.stat(path, follow_symlinks=False))
    except OSError:
        return _mode_for(None)


def _mode_for(info: os.stat_result | None) -> int:
    return stat.S_IMODE(info.st_mode) if info is not None and stat.S_ISREG(info.st_mode) else 0o666 & ~umask()


def write_atomic(path: Path, data: bytes, *, sync: bool = True, mode: int | None = None) -> None:
    """Replace `path` with `data` (a temp file beside it, renamed over it; a link at `path` is refused, not replaced).
    The file gets `mode`, else keeps the mode it had, else follows the umask."""
    with folder_of(path) as (folder, name):
        temp = f".{name}.{os.getpid()}_{secrets.token_hex(4)}.tmp"
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder)
        try:
            os.fchmod(fd, mode if mode is not None else _kept_mode(folder, name))
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                if sync:
                    handle.flush()
                    os.fsync(handle.fileno())
            os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            try:
                os.unlink(temp, dir_fd=folder)
            except FileNotFoundError:
                pass
            raise
        if sync:
            os.fsync(folder)


def _kept_mode(folder: int, name: str) -> int:
    try:
        return _mode_for(os.stat(name, dir_fd=folder, follow_symlinks=False))
    except OSError:
        return _mode_for(None)


def append(path: Path, data: bytes, mode: int = 0o644) -> None:
    """Append `data` as one write; when it fails part-way (disk full) the file is cut back (no half line)."""
    fd = open_file(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, mode)
    try:
        size = os.fstat(fd).st_size
        try:
            if os.write(fd, data) != len(data):
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        except OSError:
            os.ftruncate(fd, size)
            raise
    finally:
        os.close(fd)


def beneath(root: Path, path: Path) -> Path:
    """A project file for the model's file tools: `path` (absolute or relative to `root`) as its real path inside the
    project. A link inside the project to another place inside it is followed; one leading out of the project, a
    `..` leading out, or any link inside `.agent/` raises LinkRefused naming it."""
    real_root = Path(os.path.realpath(root))
    lexical = Path(os.path.normpath(path if path.is_absolute() else real_root / path))
    if lexical != real_root and not lexical.is_relative_to(real_root):
        raise LinkRefused(f"refused: {escaped(str(path))} leads out of the project", str(path))
    walked = real_root
    for part in lexical.relative_to(real_root).parts:
        walked = Path(os.path.realpath(walked)) / part
        if not walked.is_symlink():
            continue
        shown = walked.relative_to(real_root).as_posix()
        target = os.readlink(walked)
        if AGENT_PART in Path(shown).parts:
            raise _refusal(shown, target, "follows", True)
        real = Path(os.path.realpath(walked))
        if real != real_root and not real.is_relative_to(real_root):
            raise _refusal(shown, target, "follows", False)
    return Path(os.path.realpath(lexical))
