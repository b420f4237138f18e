"""Builds one catalog commit from a temporary index (hooks run, compare-and-swap on the branch), then syncs the real index for those paths only."""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from tui_agent.core.pids import process_alive
from tui_agent.core.versioning.commithooks import CommitHooks, Deferral
from tui_agent.core.versioning.hookhold import Hold
from tui_agent.core.versioning.indexguard import index_flags, refusal
from tui_agent.core.versioning.gitlocks import (LIVE_LOCK_WAIT_S, IndexBusy, IndexLock, LockInspection,
                                                inspect_lock, remove_stale_lock, wait_for_commits, wait_while_live)
from tui_agent.core.versioning.gitpending import PendingChange
from tui_agent.core.versioning.gitrunner import GitFailure, GitRunner

CAS_ATTEMPTS = 3
DEFAULT_MODE = "100644"
FALLBACK_IDENTITY = {
    "GIT_AUTHOR_NAME": "tuiagent", "GIT_AUTHOR_EMAIL": "tuiagent@localhost",
    "GIT_COMMITTER_NAME": "tuiagent", "GIT_COMMITTER_EMAIL": "tuiagent@localhost",
}
TEMP_FOLDER = "tuiagent"
EMPTY_TREES = frozenset({
    "4b825dc642cb6eb9a060e54bf8d69288fbee4904",
    "6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321",
})


def catch_up_message(message: str, deferred: list[str]) -> str:
    """`message` with a subject suffix and a body listing the deferred changes this commit catches up."""
    if not deferred:
        return message
    subject, _, body = message.partition("\n")
    count = len(deferred)
    lines = [f"{subject} (catching up {count} deferred change{'s' if count != 1 else ''})", ""]
    if body.strip():
        lines += [body.strip(), ""]
    lines.append("Catches up changes that could not be committed earlier:")
    lines += [f"- {item}" for item in deferred]
    return "\n".join(lines) + "\n"


def signing_args(runner: GitRunner) -> list[str]:
    """`["-S"]` when the repository's config asks for signed commits (`commit.gpgSign`), else nothing."""
    result = runner.run("config", "--type=bool", "--get", "commit.gpgsign")
    return ["-S"] if result.ok and result.text == "true" else []


@dataclass
class BuildResult:
    """The commit made (sha None: nothing differed), its message, and every path now settled."""

    sha: str | None
    message: str
    done_paths: set[str] = field(default_factory=set)
    notices: tuple[str, ...] = ()
    index_synced: bool = True


class CommitBuilder:
    """One commit attempt in one repository; paths are project-relative, `prefix` maps them into the repository."""

    def __init__(self, runner: GitRunner, prefix: str, min_stale_lock_age_s: float, *, hold: Hold | None = None) -> None:
        self.runner = runner
        self.hold = hold
        self.prefix = prefix
        self.min_stale_lock_age_s = min_stale_lock_age_s
        self.notices: list[str] = []
        self.hooks = CommitHooks(runner, hold, self.notices)
        self.hook_rewrote_tree = False
        self.index_synced = True

    # -- locks -----------------------------------------------------------------------------
    def _lock_files(self, ref: str | None) -> list[Path]:
        locks = [self.runner.git_dir / "index.lock", self.runner.git_dir / "HEAD.lock"]
        if ref:
            locks.append(self.runner.common_dir / f"{ref}.lock")
        return locks

    def _inspect(self, lock: Path) -> LockInspection:
        folders = (self.runner.work_tree, self.runner.git_dir, self.runner.common_dir)
        return inspect_lock(lock, folders, min_stale_age_s=self.min_stale_lock_age_s)

    def live_lock(self, ref: str | None) -> str | None:
        """Why a lock blocks committing (held by a live process), or None."""
        for lock in self._lock_files(ref):
            inspection = self._inspect(lock)
            if inspection.state == "live":
                return f"{lock.name} is held by a running git ({inspection.holder}); retrying later"
        return None

    def clear_stale_locks(self, ref: str | None) -> None:
        """Remove locks left by killed processes (noted); raise Deferral on a live one."""
        for lock in self._lock_files(ref):
            inspection = wait_while_live(lock, self._inspect, LIVE_LOCK_WAIT_S)  # a person's commit finishes first
            if inspection.state == "live":
                raise Deferral(f"{lock.name} is held by a running git ({inspection.holder}); retrying later",
                               tuple(self.notices))
            if remove_stale_lock(inspection):
                self.notices.append(f"removed a stale {self._display(lock)} "
                                    f"left by a killed process ({inspection.age_s:.0f}s old)")
        self._clear_own_temp_files()
        self._wait_for_a_persons_commit()

    def _wait_for_a_persons_commit(self) -> None:
        """A person's `git commit` in progress (in its editor, its hooks) finishes first: moving HEAD under it would
        make it fail. Waited for (bounded), then the catalog commit is deferred rather than breaking theirs."""
        folders = (self.runner.work_tree, self.runner.git_dir, self.runner.common_dir)
        running = wait_for_commits(folders, LIVE_LOCK_WAIT_S)
        if running:
            raise Deferral(f"a git commit is in progress in this repository (process {running[0]}); retrying later",
                           tuple(self.notices))

    def _display(self, path: Path) -> str:
        try:
            return path.relative_to(self.runner.work_tree).as_posix()
        except ValueError:
            return str(path)

    def _clear_own_temp_files(self) -> None:
        folder = self.runner.git_dir / TEMP_FOLDER
        if not folder.is_dir():
            return
        for item in folder.iterdir():
            pid_text = item.name.split("-")[1] if item.name.count("-") >= 2 else ""
            if pid_text.isdigit() and not process_alive(int(pid_text)):
                item.unlink(missing_ok=True)

    # -- objects -----------------------------------------------------------------------------
    def repo_path(self, path: str) -> str:
        return f"{self.prefix}{path}"

    def hash_blob(self, path: str, content: bytes) -> str:
        return self.runner.must("hash-object", "-w", "--stdin", f"--path={self.repo_path(path)}", input=content).text

    # -- the commit ----------------------------------------------------------------------------
    def commit(self, changes: dict[str, bytes | None], earlier: dict[str, PendingChange], message: str) -> BuildResult:
        ref = self.runner.branch_ref()
        self.clear_stale_locks(ref)
        for _ in range(CAS_ATTEMPTS):
            ref = self.runner.branch_ref()
            head = self.runner.head()
            if ref is None or head is None:
                raise Deferral("HEAD moved off a branch while committing", tuple(self.notices))
            outcome = self._attempt(ref, head, changes, earlier, message)
            if outcome is not None:
                return outcome
        raise Deferral("the branch kept moving while committing (another commit raced); retrying later",
                       tuple(self.notices))

    def _attempt(self, ref: str, head: str, changes: dict[str, bytes | None],
                 earlier: dict[str, PendingChange], message: str) -> BuildResult | None:
        earlier, skipped = self._guard(changes, earlier)
        paths = list(changes) + list(earlier)
        head_blobs = {p[len(self.prefix):]: v for p, v in self.runner.tree_blobs(head, [self.repo_path(p) for p in paths]).items()}
        wanted: dict[str, str | None] = {}
        caught_up: list[str] = []
        for path in paths:
            content = changes[path] if path in changes else earlier[path].content
            blob = self.hash_blob(path, content) if content is not None else None
            current = head_blobs.get(path, (None, None))[1]
            if blob == current:
                wanted[path] = blob
                continue
            if path in earlier and current != earlier[path].base_blob:
                self.notices.append(f"dropped the deferred change of {path}: it was committed differently since")
                continue
            wanted[path] = blob
            if path in earlier:
                caught_up.append(f"{earlier[path].message} [{path}]")
        effective = {p: b for p, b in wanted.items() if b != head_blobs.get(p, (None, None))[1]}
        if not effective:
            synced = self.sync_real_index(wanted, head_blobs, ref)
            done = set(paths) if synced else set(paths) - set(wanted)
            return BuildResult(None, message, done | skipped, tuple(self.notices), synced)
        full_message = catch_up_message(message, caught_up)
        sha = self._build(ref, head, effective, head_blobs, full_message, wanted)
        if sha is None:
            return None
        synced = self.index_synced
        done = set(paths) if synced else set(paths) - set(wanted)
        return BuildResult(sha, full_message, done | skipped, tuple(self.notices), synced)

    def _guard(self, changes: dict[str, bytes | None],
               earlier: dict[str, PendingChange]) -> tuple[dict[str, PendingChange], set[str]]:
        """Never touch an unmerged, skip-worktree (sparse) or conflict-marked path: a change asked now defers the whole
        commit; a journaled one waits in the journal (a skip-worktree deletion is dropped: it never was a deletion).
        Returns the journaled changes that may go in, and the dropped paths."""
        flags = index_flags(self.runner, [self.repo_path(path) for path in [*changes, *earlier]])
        refused = [reason for path, content in changes.items()
                   if (reason := refusal(self.repo_path(path), content, flags)) is not None]
        if refused:
            raise Deferral("; ".join(refused), tuple(self.notices))
        allowed: dict[str, PendingChange] = {}
        dropped: set[str] = set()
        for path, change in earlier.items():
            reason = refusal(self.repo_path(path), change.content, flags)
            if reason is None:
                allowed[path] = change
            elif change.content is None and self.repo_path(path) in flags.skip_worktree:
                dropped.add(path)
                self.notices.append(f"dropped the deferred deletion of {path}: {reason}")
        return allowed, dropped

    def _index_args(self, blobs: dict[str, str | None], modes: dict[str, tuple[str, str]]) -> list[str]:
        args: list[str] = []
        for path, blob in sorted(blobs.items()):
            if blob is None:
                args += ["--force-remove", self.repo_path(path)]
            else:
                mode = modes.get(path, (DEFAULT_MODE, ""))[0]
                args += ["--add", "--cacheinfo", f"{mode},{blob},{self.repo_path(path)}"]
        return args

    def _moved_anyway(self, stderr: str, head: str | None, sha: str, ref: str | None) -> bool:
        """After a failed `update-ref`: True when the branch points to our commit all the same (only its reflog
        failed), False when another commit raced (retry); a Deferral naming git's error when the branch did not
        move at all (a live lock, a full disk): that is not a race and retrying cannot help."""
        now = self.runner.head()
        if now == sha:
            self.notices.append(f"the branch moved but git reported: {stderr}")
            return True
        if now == (head or None) or ("lock" in stderr and "exists" in stderr):
            raise Deferral(f"could not move {ref or 'HEAD'}: {stderr}", tuple(self.notices))
        return False

    def _temp_file(self, kind: str) -> Path:
        folder = self.runner.git_dir / TEMP_FOLDER
        folder.mkdir(exist_ok=True)
        return folder / f"{kind}-{os.getpid()}-{secrets.token_hex(4)}"

    def _build(self, ref: str | None, head: str | None, effective: dict[str, str | None],
               modes: dict[str, tuple[str, str]], message: str,
               wanted: dict[str, str | None] | None = None) -> str | None:
        """Make the commit and move `ref` from `head` to it, then set the real index's `wanted` entries, all under git's
        own index.lock (a Deferral when HEAD left the branch meanwhile); None when the branch moved meanwhile."""
        self.hooks.refuse_unapproved()
        self.hooks.refuse_held()
        index = self._temp_file("index")
        message_file = self._temp_file("msg")
        env = {"GIT_INDEX_FILE": str(index)}
        try:
            if head:
                self.runner.must("read-tree", head, env=env)
            else:
                self.runner.must("read-tree", "--empty", env=env)
            self.runner.must("update-index", *self._index_args(effective, modes), env=env)
            tree = self.runner.must("write-tree", env=env).text
            if self.hooks.run("pre-commit", [], env):
                tree = self._tree_after_hook(tree, env)
            if tree in EMPTY_TREES:  # git knows the empty tree without storing it; a commit needs the object
                self.runner.must("hash-object", "-w", "-t", "tree", "--stdin", input=b"")
            # A final newline, so that a commit-msg hook appending a trailer puts it on a line of its own.
            message_file.write_text(message if message.endswith("\n") else message + "\n", encoding="utf-8")
            self.hooks.run("commit-msg", [str(message_file)], env)
            final_message = message_file.read_text(encoding="utf-8")
            sha = self._commit_tree(tree, head, message_file)
            subject = final_message.splitlines()[0] if final_message.strip() else "tuiagent"
            self._wait_for_a_persons_commit()  # one started while the hooks ran
            with self._index_lock() as lock:  # no `git commit` or checkout starts between the ref move and the index sync
                if ref is not None and self.runner.branch_ref() != ref:
                    raise Deferral(f"HEAD moved to another branch while committing (was {ref}); retrying later",
                                   tuple(self.notices))
                moved = self.runner.run("update-ref", "-m", f"commit: {subject}", ref or "HEAD", sha, head or "")
                if not moved.ok and not self._moved_anyway(moved.stderr, head, sha, ref):
                    return None
                if wanted is not None and ref is not None and self.runner.branch_ref() != ref:
                    self.notices.append(f"HEAD left {ref} as the commit landed: the index was left as it is")
                elif wanted is not None:
                    if self.hook_rewrote_tree:
                        wanted.update(self._hook_blobs(sha, wanted))
                    self.index_synced = self._write_index(lock, wanted, modes)
            self.hooks.run("post-commit", [], {}, check=False)  # with the real index, synced: as after `git commit`
            return sha
        finally:
            for leftover in (index, index.with_name(index.name + ".lock"), message_file):
                leftover.unlink(missing_ok=True)

    def _hook_blobs(self, sha: str, wanted: dict[str, str | None]) -> dict[str, str | None]:
        """The blobs the commit really holds for `wanted` paths (a pre-commit hook may have reformatted them), so the
        real index is synced with what was committed, not with what was asked."""
        committed = self.runner.tree_blobs(sha, [self.repo_path(p) for p in wanted])
        return {path: committed.get(self.repo_path(path), (None, None))[1] for path in wanted}

    def _tree_after_hook(self, tree: str, env: dict[str, str]) -> str:
        after = self.runner.must("write-tree", env=env).text
        if after == tree:
            return tree
        self.hook_rewrote_tree = True
        changed = self.runner.must("diff-tree", "-r", "--name-only", "-z", tree, after).stdout.decode("utf-8", "replace")
        outside = [name for name in changed.split("\0") if name and not name.startswith(f"{self.prefix}.agent/")]
        if outside:
            raise Deferral(f"the pre-commit hook staged files outside .agent/ ({', '.join(outside[:3])}); "
                           "not committing them", tuple(self.notices))
        return after

    def _commit_tree(self, tree: str, head: str | None, message_file: Path) -> str:
        parents = ["-p", head] if head else []
        sign = signing_args(self.runner)  # commit-tree ignores commit.gpgSign: ask for it the way `git commit` would
        result = self.runner.run("commit-tree", *sign, tree, *parents, "-F", str(message_file))
        if not result.ok and ("identity" in result.stderr.lower() or "tell me who you are" in result.stderr.lower()
                              or "empty ident" in result.stderr.lower()):
            result = self.runner.run("commit-tree", *sign, tree, *parents, "-F", str(message_file), env=FALLBACK_IDENTITY)
        if not result.ok and sign:
            raise Deferral(f"commit.gpgSign is set and signing the commit failed ({result.stderr or result.status}); "
                           "not committing unsigned", tuple(self.notices))
        if not result.ok:
            raise Deferral(f"git commit-tree failed: {result.stderr}", tuple(self.notices))
        return result.text

    @contextlib.contextmanager
    def _index_lock(self) -> Iterator[IndexLock]:
        """git's index.lock, held (a Deferral when a running git kept it for the whole bounded wait)."""
        try:
            with IndexLock(self.runner.git_dir / "index", self._inspect) as lock:
                if lock.removed_stale:
                    self.notices.append("removed a stale .git/index.lock left by a killed process")
                yield lock
        except IndexBusy as busy:
            raise Deferral(f"{busy}; retrying later", tuple(self.notices)) from None

    def _write_index(self, lock: IndexLock, wanted: dict[str, str | None], modes: dict[str, tuple[str, str]]) -> bool:
        """The real index (read under `lock`) with `wanted` set, written through the lock; False (noted) on failure."""
        temp = self._temp_file("real-index")
        try:
            if lock.index.exists():
                shutil.copy2(lock.index, temp)
            result = self.runner.run("update-index", *self._index_args(wanted, modes), env={"GIT_INDEX_FILE": str(temp)})
            if not result.ok:
                self.notices.append(f"the index entries of .agent/ could not be updated now: {result.stderr}")
                return False
            if temp.exists():  # git writes no index when nothing changed in it
                lock.commit(temp.read_bytes())
            return True
        finally:
            temp.unlink(missing_ok=True)
            temp.with_name(temp.name + ".lock").unlink(missing_ok=True)

    def sync_real_index(self, wanted: dict[str, str | None], modes: dict[str, tuple[str, str]],
                        ref: str | None = None) -> bool:
        """Make the real index agree with the commit for these paths only (other entries are left as they are),
        holding git's index.lock for the read-modify-write; False (noted) when the index cannot be written now or
        HEAD is no longer on `ref` (the index is another branch's then)."""
        if not wanted:
            return True
        try:
            with self._index_lock() as lock:
                if ref is not None and self.runner.branch_ref() != ref:
                    self.notices.append(f"HEAD left {ref}: the index was left as it is")
                    return False
                return self._write_index(lock, wanted, modes)
        except Deferral as deferral:
            self.notices.append(f"the index entries of .agent/ could not be updated now: {deferral.reason}")
            return False

    def root_commit(self, files: dict[str, bytes], message: str) -> str | None:
        """The first commit of a fresh repository (`init_repo`), holding only `files`."""
        ref = self.runner.branch_ref() or "refs/heads/main"
        blobs: dict[str, str | None] = {path: self.hash_blob(path, content) for path, content in files.items()}
        try:
            sha = self._build(ref, None, blobs, {}, message, dict(blobs))
        except (Deferral, GitFailure):
            return None
        return sha
