"""Looks inside the git data a sandboxed run wrote before the person's repository takes it (sandbox/harvest.py): a
new loose object must hash to its name and a new pack pass git's own check (git never checks an object's hash when it
reads one), an existing object file never changes, an index may name no path git's checkout must never write, packed
refs carry no replace ref, and no ref, HEAD or reflog entry the run moves or makes gets a tree that differs from the
person's at a protected path (their next reset or checkout would write it). Git runs here in an empty repository of
tuiagent's, never under the project's config. What of `.git` a run may write at all is said here too (`git_writable`,
`git_refusal`: what commits write)."""

from __future__ import annotations

import atexit
import filecmp
import hashlib
import os
import re
import shutil
import stat
import subprocess
import threading
import zlib
from collections.abc import Callable
from pathlib import Path

from tui_agent.core.tempfolders import owned_temp
from tui_agent.core.versioning.gitdoor import run_git

GIT_COMMIT_FOLDERS = frozenset({"objects", "refs", "logs", "lfs"})
GIT_COMMIT_FILES = frozenset({
    "index", "HEAD", "COMMIT_EDITMSG", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "MERGE_MSG", "MERGE_MODE", "MERGE_RR",
    "CHERRY_PICK_HEAD", "REVERT_HEAD", "REBASE_HEAD", "AUTO_MERGE", "packed-refs",
})
GIT_NOT_DATA = frozenset({"objects/info/alternates", "objects/info/http-alternates"})
"""What of the project's own `.git` an approved writable run may change: what commits and merges write. Everything
else there (`config`, `hooks/`, `info/`, `modules/`, `commondir`, where objects come from, and a rebase's or
cherry-pick's state, whose to-do list may `exec` commands when the person continues it, and replace refs, which give
another object for an existing one) decides what git runs or reads from where, on the person's machine: never
applied. What is applied is looked into first (`GitIntake`)."""
GIT_REPLACE_REFS = "refs/replace"
LOOSE_OBJECT = re.compile(r"objects/[0-9a-f]{2}/(?:[0-9a-f]{38}|[0-9a-f]{62})")
PACK_FILE = re.compile(r"objects/pack/pack-(?:[0-9a-f]{40}|[0-9a-f]{64})\.(?:pack|idx)")
HFS_IGNORED = re.compile("[\u200c-\u200f\u202a-\u202e\u206a-\u206f\ufeff]")
"""Characters HFS+ ignores in a name (`.g\u200cit` is `.git` there): git's own path check strips them too."""
EMPTY_TREES = {"sha1": "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
               "sha256": "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321"}
PSEUDO_REFS = frozenset({"HEAD", "ORIG_HEAD", "FETCH_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "REVERT_HEAD",
                         "REBASE_HEAD", "AUTO_MERGE"})
"""The files of `.git` holding object ids a person's git may check out (`git reset --hard ORIG_HEAD`...)."""
MAX_LOG_IDS = 256
"""The most commits the lines a run adds to one reflog may name (each costs a `git diff-tree`)."""
OBJECT_ID = re.compile(rb"[0-9a-f]{40}(?:[0-9a-f]{24})?")
SAME = ""
"""`GitIntake.refusal`'s answer for a run's object file that is the project's byte for byte: nothing to apply."""

_lock = threading.Lock()
_empty: dict[str, Path] = {}


def git_writable(inner: str) -> bool:
    """Whether a run may change `.git/<inner>` (a path inside git's folder, not `.git` itself)."""
    first = inner.split("/", 1)[0]
    replace = inner == GIT_REPLACE_REFS or inner.startswith(GIT_REPLACE_REFS + "/")
    return (first in GIT_COMMIT_FOLDERS and inner not in GIT_NOT_DATA and not replace) or inner in GIT_COMMIT_FILES


def git_refusal(inner: str, mode: int, git_folder: bool) -> str | None:
    """Why a run's `.git/<inner>` (of `mode`) may not be applied, or None (what a commit writes); `git_folder`: the
    project has a real `.git` folder."""
    if inner == "":
        return None if stat.S_ISDIR(mode) and git_folder else "the run made or replaced git's folder of the project"
    if inner.endswith(".lock"):
        return "a lock file an interrupted git command left (it would block your git)"
    if not git_writable(inner):
        what = inner if inner in GIT_NOT_DATA else "/".join(inner.split("/", 2)[:2 if inner.startswith("refs/") else 1])
        return (f"git's {what} decides what git runs or reads on your machine; a run may change "
                "only what commits need in .git (objects, refs, logs, index, HEAD)")
    return None if stat.S_ISREG(mode) or stat.S_ISDIR(mode) else "a symlink inside git's folder"


class GitIntake:
    """The checks of one run's writes into the project's `.git` at `root` (a pack's answer kept for its pair)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.format: str | None = None
        self.packs: dict[str, bool] = {}
        self.told: list[tuple[str, str]] = []
        """(path in `.git`, what was taken out of the run's file there before it was applied)."""
        self.held: set[str] = set()
        """Refs whose packed line of the run's was left out: the person's loose file of it stays too."""
        self.head: bytes | None = None
        """The person's HEAD commit before any of the run's refs applied (read at the first ref the run changed)."""
        self.sound: bool | None = None
        """Whether every object file of the run's would apply (git reads none of them for a ref's tree otherwise)."""

    def refusal(self, inner: str, source: Path, target: Path, protected: Callable[[str, bool], bool]) -> str | None:
        """Why the run's regular file `source` may not become `.git/<inner>` (now `target`), SAME when it already is
        that, None when it may; `protected(path, folder)`: whether a work-tree path is one a run may not write."""
        if inner.startswith("objects/"):
            return self.object_refusal(inner, source, target)
        if inner == "index":
            return self.index_refusal(source, target, protected)
        if inner != "packed-refs" and inner not in PSEUDO_REFS and not inner.startswith(("refs/", "logs/")):
            return None
        run_git_dir = Path(str(source)[:-len(inner)])
        self.person_head()  # before the run's HEAD replaces the person's
        if inner == "packed-refs":
            self.filter_packed(source, run_git_dir, protected)
            return None
        if inner.startswith("logs/"):
            return self.log_refusal(inner, source, target, run_git_dir, protected)
        name = inner if inner.startswith("refs/") else None
        for tip in _ids(source) if name is None else _ids(source)[:1]:
            why = self.tip_refusal(name, tip, run_git_dir, protected)
            if why is not None:
                return why
        branch = _symbolic(_first_line(source)) if inner == "HEAD" else None
        moved = _ref_value(run_git_dir, branch) if branch is not None else None  # a branch the run made or moved
        return None if branch is None or moved is None else self.tip_refusal(branch, moved, run_git_dir, protected)

    def object_refusal(self, inner: str, source: Path, target: Path) -> str | None:
        if os.path.lexists(target):
            same = target.is_file() and not target.is_symlink() and filecmp.cmp(source, target, shallow=False)
            return SAME if same else "git never rewrites an object file: a changed one gives your history other bytes"
        if LOOSE_OBJECT.fullmatch(inner):
            return None if _hashes_to(source, inner[8:10] + inner[11:]) else "a loose object not holding what its " \
                                                                               "name says"
        if not PACK_FILE.fullmatch(inner):
            return "git reads it to find or index objects; of .git/objects a run may add only objects and packs"
        pack = str(source.with_suffix(".pack"))
        if pack not in self.packs:
            done = self.git(["index-pack", "--verify", pack])
            self.packs[pack] = done is not None and done.returncode == 0
        return None if self.packs[pack] else "a pack git's index-pack --verify does not accept with its index"

    def filter_packed(self, packed: Path, run_git_dir: Path, protected: Callable[[str, bool], bool]) -> None:
        """Rewrite the run's `packed-refs` in one pass: its replace refs left out (git would read another object for
        one of yours), and the person's lines (none if they had none) in place of those whose tip `tip_refusal`
        refuses, each ref with its peeled line; the person's loose file of such a ref stays (`held`). What was left
        out is `told`; the rest applies."""
        kept: list[bytes] = []
        replaced, refused = 0, list[str]()
        dropping = False
        with open(packed, "rb") as refs:
            for line in refs:
                if line.startswith(b"^"):
                    kept += [] if dropping else [line]
                    continue
                fields, dropping = line.split(), False
                if b" refs/replace/" in line:
                    dropping, replaced = True, replaced + 1
                elif len(fields) == 2 and OBJECT_ID.fullmatch(fields[0]):
                    name = os.fsdecode(fields[1])
                    why = self.tip_refusal(name, fields[0], run_git_dir, protected)
                    if why is not None:
                        dropping = True
                        refused.append(f"{name}: {why}")
                        self.held.add(name)
                        kept += _packed_lines(self.root / ".git" / "packed-refs", fields[1])
                kept += [] if dropping else [line]
        said = [f"{replaced} replace ref(s) left out (git would read another object for one of yours)"] if replaced else []
        if refused:
            said.append(f"kept yours of {'; '.join(refused)}")
        if said:
            with open(packed, "wb") as refs:
                refs.writelines(kept)
            self.told.append(("packed-refs", f"{'; '.join(said)}; the rest applied"))

    def log_refusal(self, inner: str, source: Path, target: Path, run_git_dir: Path,
                    protected: Callable[[str, bool], bool]) -> str | None:
        """Why the run's reflog `.git/<inner>` is refused: an object id in a line it added whose tree `tip_refusal`
        refuses for that ref (the person's `git reset --hard HEAD@{1}` checks it out), or too many to check."""
        with open(source, "rb") as handle:
            data = handle.read()
        try:
            with open(target, "rb") as handle:
                before = handle.read()
        except OSError:
            before = b""
        added = data[len(before):] if before and data.startswith(before) else data
        ids = {word for line in added.splitlines() for word in line.split()[:2]
               if OBJECT_ID.fullmatch(word) and word.strip(b"0")}  # all zeros: no commit (a ref made or deleted)
        if len(ids) > MAX_LOG_IDS:
            return f"a reflog adding more than {MAX_LOG_IDS} commits (each would be looked into)"
        name = inner.removeprefix("logs/") if inner.startswith("logs/refs/") else None
        for tip in sorted(ids):
            why = self.tip_refusal(name, tip, run_git_dir, protected)
            if why is not None:
                return f"a reflog entry that is {why}"
        return None

    def tip_refusal(self, name: str | None, tip: bytes, run_git_dir: Path,
                    protected: Callable[[str, bool], bool]) -> str | None:
        """Why the ref `name` (None: HEAD or another of PSEUDO_REFS) may not become `tip`: its tree differs from the
        person's tip of it (their HEAD's for a new ref) at a protected path, or git cannot compare them."""
        old = (_ref_value(self.root / ".git", name) if name is not None else None) or self.person_head()
        if old == tip:
            return None
        objects = run_git_dir / "objects"
        if not self.objects_sound(objects):
            return "a ref moved in a run whose object files do not all check out"
        project_objects = str(self.root / ".git" / "objects")
        env = {"GIT_OBJECT_DIRECTORY": str(objects), "GIT_ALTERNATE_OBJECT_DIRECTORIES": project_objects} \
            if os.path.isdir(objects) else {"GIT_OBJECT_DIRECTORY": project_objects}
        done = self.git(["-c", "core.commitGraph=false", "-c", "core.multiPackIndex=false", "diff-tree", "-r", "-z",
                         "--no-renames", "--name-only", os.fsdecode(old), os.fsdecode(tip)], env)
        if done is None or done.returncode != 0:
            return "a ref to something git cannot compare with your tree"
        for path in os.fsdecode(done.stdout).split("\0")[:-1]:
            if any(protected(prefix, prefix != path) for prefix in _prefixes(path)):
                return f"a ref to a tree that changes the protected path {path!r} (your next checkout would write it)"
        return None

    def person_head(self) -> bytes:
        """The person's HEAD commit as the first ref check found it (the empty tree when there is none)."""
        if self.head is None:
            self.head = _ref_value(self.root / ".git", "HEAD") or EMPTY_TREES[self.object_format()].encode()
        return self.head

    def objects_sound(self, objects: Path) -> bool:
        """Whether every loose object and pack the run left in `objects` would apply (or is the project's already),
        and it names no other folder to read objects from: then git reads only what the harvest lets through."""
        if self.sound is None:
            self.sound = not os.path.lexists(objects / "info" / "alternates")
            for folder, _dirs, files in os.walk(objects):
                for name in files:
                    source = Path(folder) / name
                    inner = f"objects/{source.relative_to(objects).as_posix()}"
                    if not (LOOSE_OBJECT.fullmatch(inner) or PACK_FILE.fullmatch(inner)) or not source.is_file():
                        continue  # git reads no other file, and no deletion (a character device), as objects
                    if source.is_symlink() or self.object_refusal(inner, source, self.root / ".git" / inner) not in (
                            None, SAME):
                        self.sound = False
        return self.sound

    def index_refusal(self, source: Path, target: Path, protected: Callable[[str, bool], bool]) -> str | None:
        """An entry git's checkout would write into `.git` or out of the project, or a new or changed one at a
        protected path (a checkout would write it: a run may not): why the index is refused."""
        entries = self.entries(source)
        if entries is None:
            return "an index git cannot read"
        before = (self.entries(target) or {}) if os.path.isfile(target) else {}
        for path, entry in entries.items():
            if not safe_path(path):
                return f"an index naming {path!r}, a path git's checkout must never write"
            if before.get(path) != entry and any(protected(prefix, prefix != path) for prefix in _prefixes(path)):
                return f"an index adding or changing the protected path {path!r} (your next checkout would write it)"
        return None

    def entries(self, index: Path) -> dict[str, bytes] | None:
        """Path -> its mode, object id and stage, for every entry of the index file `index` (None if unreadable)."""
        done = self.git(["ls-files", "-s", "-z"], {"GIT_INDEX_FILE": str(index)})
        if done is None or done.returncode != 0:
            return None
        entries: dict[str, bytes] = {}
        for record in done.stdout.split(b"\0")[:-1]:
            head, _tab, name = record.partition(b"\t")
            entries[os.fsdecode(name)] = head
        return entries

    def object_format(self) -> str:
        """The project's object format (sha1 unless git says sha256)."""
        if self.format is None:
            try:
                done = run_git(self.root, "rev-parse", "--show-object-format", text=True)
                self.format = "sha256" if done.returncode == 0 and done.stdout.strip() == "sha256" else "sha1"
            except (OSError, subprocess.TimeoutExpired):
                self.format = "sha1"
        return self.format

    def git(self, args: list[str], extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes] | None:
        """`git ARGS` in the empty repository of the project's object format (None when git could not run)."""
        folder = empty_repository(self.object_format())
        env = {"PATH": os.environ.get("PATH", os.defpath), "HOME": str(folder), "GIT_DIR": str(folder),
               "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull, **(extra or {})}
        try:
            result: subprocess.CompletedProcess[bytes] = run_git(folder, *args, env=env)
        except (OSError, subprocess.TimeoutExpired):
            return None
        return result


def safe_path(path: str) -> bool:
    """Whether git's own check (verify_path, with core.protectNTFS and core.protectHFS) lets a checkout write `path`:
    relative, no `.`, `..` or empty part, no part (nor a piece of one between backslashes, NTFS's separator) that is
    `.git` in any case or a name NTFS or HFS+ takes for it."""
    for part in path.split("/"):
        if part in ("", ".", ".."):
            return False
        for piece in part.split("\\"):
            folded = HFS_IGNORED.sub("", piece).lower()
            if folded.rstrip(". ") in (".git", "git~1") or folded.startswith(".git:"):
                return False
    return True


def _ids(ref: Path) -> list[bytes]:
    """The object ids a ref file holds (the first word of each line: FETCH_HEAD has several); none for a symbolic ref
    (the ref it names is checked itself)."""
    with open(ref, "rb") as handle:
        lines = handle.read(1 << 20).splitlines()
    return [line.split()[0] for line in lines if line.split() and OBJECT_ID.fullmatch(line.split()[0])]


def _first_line(ref: Path) -> bytes:
    with open(ref, "rb") as handle:
        return handle.readline(4096).strip()


def _symbolic(first: bytes) -> str | None:
    """The ref a symbolic ref's first line names (`ref: refs/heads/main`), None for another."""
    return os.fsdecode(first[5:].strip()) if first.startswith(b"ref: ") else None


def _ref_value(git_dir: Path, name: str, depth: int = 0) -> bytes | None:
    """The object id the ref `name` holds in `git_dir` (a loose file, else its packed-refs line; a symbolic ref
    followed a few steps), None when it has none."""
    loose = git_dir / name
    if depth < 5 and loose.is_file() and not loose.is_symlink() and safe_path(name):
        first = _first_line(loose)
        branch = _symbolic(first)
        if branch is not None:
            return _ref_value(git_dir, branch, depth + 1)
        return first if OBJECT_ID.fullmatch(first) else None
    try:
        with open(git_dir / "packed-refs", "rb") as packed:
            for line in packed:
                fields = line.split()
                if len(fields) == 2 and fields[1] == os.fsencode(name) and OBJECT_ID.fullmatch(fields[0]):
                    return fields[0]
    except OSError:
        return None
    return None


def _packed_lines(packed: Path, name: bytes) -> list[bytes]:
    """The line of the ref `name` in the `packed` refs file, with its peeled line (none when it is not there)."""
    found: list[bytes] = []
    try:
        with open(packed, "rb") as refs:
            for line in refs:
                if found and not line.startswith(b"^"):
                    break
                if found or line.split()[1:] == [name]:
                    found.append(line)
    except OSError:
        return []
    return found


def _prefixes(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:end]) for end in range(1, len(parts) + 1)]


def _hashes_to(path: Path, name: str) -> bool:
    """Whether the loose object file `path` inflates to exactly the object `name` (hex) names."""
    digest = hashlib.sha1() if len(name) == 40 else hashlib.sha256()
    inflate = zlib.decompressobj()
    try:
        with open(path, "rb") as handle:
            while chunk := handle.read(1 << 16):
                while chunk:
                    digest.update(inflate.decompress(chunk, 1 << 20))
                    chunk = inflate.unconsumed_tail
            digest.update(inflate.flush())
    except (OSError, zlib.error):
        return False
    return inflate.eof and not inflate.unused_data and digest.hexdigest() == name


def empty_repository(object_format: str) -> Path:
    """A repository of tuiagent's with nothing in it (made once per process, removed at exit)."""
    with _lock:
        if object_format not in _empty:
            folder = owned_temp("empty-git")
            atexit.register(shutil.rmtree, folder, True)
            (folder / "objects").mkdir()
            (folder / "refs").mkdir()
            (folder / "HEAD").write_text("ref: refs/heads/main\n")
            if object_format != "sha1":
                (folder / "config").write_text(f"[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = "
                                               f"{object_format}\n")
            _empty[object_format] = folder
        return _empty[object_format]
