"""CatalogGit: commits `.agent/` changes from a temporary index without touching the user's work, defers when it cannot, catches up later.

Contract (the catalog codes against it):

- `CatalogGit(root)`: `root` is the project root; a repository is found there or in a parent
  folder. Works without a repository (`status().has_repo` is False; every commit defers).
- `commit(changes, message)`: `changes` maps project-relative paths under `.agent/` to their new
  bytes (None = delete); any other path raises ValueError. The commit is built from a temporary
  index (read-tree HEAD, only these paths updated, write-tree, commit-tree -p HEAD) and the branch
  is moved with a compare-and-swap `update-ref`. The pre-commit and commit-msg hooks run (a failing
  hook defers; never bypassed). The real index is then updated for these paths only, so the user's
  staged, unstaged and untracked work elsewhere stays byte-identical. The work tree is never
  written: the caller writes the files (atomically) before committing.
- A commit is deferred (returned with `committed=False` and a `deferred_reason`) when there is no
  repository, no commit yet, a detached HEAD, a merge/rebase/cherry-pick/revert/bisect in
  progress, a failing hook, a lock held by a live git process, or the hooks hold (hooks would run after
  agent code could change project files; `hookhold`). Deferred changes are journaled
  in `.agent/cache/pending.json` (later changes of a path override earlier ones); the next commit
  that can go through includes them and its message says it catches up (`catch_up_message`).
  `committed=False` with no `deferred_reason` means there was nothing to commit.
- A stale lock (`index.lock`, `HEAD.lock`, the branch's ref lock) left by a killed process is
  removed, and the outcome's message says so; a live one is respected.
- Never forces, never rewrites history. Blocking (tens of ms): call it from a worker thread in
  async code (`asyncio.to_thread`).
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import git

from tui_agent.core.versioning import hookhold, journalcheck
from tui_agent.core.versioning.gitdoor import GitConfigError, GitDoorRefusal, init_repo, open_repo
from tui_agent.core.versioning.commithooks import Deferral
from tui_agent.core.versioning.gitcommit import CommitBuilder, catch_up_message
from tui_agent.core.versioning.gitpending import PendingChange, PendingJournal, exclusive_lock, removed_by_deletion
from tui_agent.core.versioning.gitqueries import GitQueries, HistoryEntry
from tui_agent.core.versioning.gitrunner import GitFailure, GitRunner
from tui_agent.core.versioning.indexguard import IndexFlags, index_flags, refusal

__all__ = ["CatalogGit", "CommitOutcome", "GitStatus", "HistoryEntry", "catch_up_message"]

AGENT_PREFIX = ".agent/"
PENDING_FILE = ".agent/cache/pending.json"
LOCK_FILE = ".agent/cache/gitstore.lock"

IN_PROGRESS = (
    ("MERGE_HEAD", "a merge is in progress (finish it with `git commit` or `git merge --abort`)"),
    ("rebase-merge", "a rebase is in progress (`git rebase --continue` or `--abort`)"),
    ("rebase-apply", "a rebase or `git am` is in progress (`--continue` or `--abort`)"),
    ("CHERRY_PICK_HEAD", "a cherry-pick is in progress (`git cherry-pick --continue` or `--abort`)"),
    ("REVERT_HEAD", "a revert is in progress (`git revert --continue` or `--abort`)"),
    ("BISECT_LOG", "a bisect is in progress (`git bisect reset` ends it)"),
)


@dataclass(frozen=True)
class GitStatus:
    """What the git layer can do right now; `reason` says why it cannot commit."""

    has_repo: bool
    can_commit: bool
    reason: str | None
    branch: str | None
    head: str | None


@dataclass(frozen=True)
class CommitOutcome:
    """Result of `commit()`: the new commit, or why it was deferred; `message` is for people."""

    committed: bool
    sha: str | None
    deferred_reason: str | None
    message: str
    notices: tuple[str, ...] = ()


def normalize_catalog_path(path: str) -> str:
    """The path as `.agent/...` in POSIX form; ValueError for anything outside `.agent/`."""
    if not isinstance(path, str) or not path or "\\" in path or any(ch in path for ch in "\0\n\r"):
        raise ValueError(f"not a catalog path: {path!r}")
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or "." in pure.parts[1:]:
        raise ValueError(f"catalog paths must be relative and under .agent/: {path!r}")
    text = pure.as_posix()
    if not text.startswith(AGENT_PREFIX) or len(pure.parts) < 2:
        raise ValueError(f"refusing to commit a path outside .agent/: {path!r}")
    return text


class CatalogGit:
    """The catalog's git layer for one project (see the module docstring for the contract)."""

    def __init__(self, root: Path, *, min_stale_lock_age_s: float = 0.0) -> None:
        self.root = Path(root).resolve()
        self.min_stale_lock_age_s = min_stale_lock_age_s
        self._journal = PendingJournal(self.root / PENDING_FILE)
        self._mutex = threading.RLock()
        self._runner: GitRunner | None = None
        self.refusal: str | None = None
        """Why the repository holding the project cannot be used (GitDoorRefusal, GitConfigError), when so."""
        self._prefix = ""
        self._discover()

    @staticmethod
    def init_repo(root: Path) -> "CatalogGit":
        """Create a repository at `root` (unless one exists) with a first commit holding only `.agent/.gitignore`."""
        root = Path(root).resolve()
        existing = CatalogGit(root)
        if existing.status().has_repo:
            return existing
        init_repo(root)
        store = CatalogGit(root, min_stale_lock_age_s=existing.min_stale_lock_age_s)
        assert store._runner is not None
        gitignore = root / ".agent" / ".gitignore"
        files = {".agent/.gitignore": gitignore.read_bytes()} if gitignore.is_file() else {}
        CommitBuilder(store._runner.for_commits(root), store._prefix, store.min_stale_lock_age_s, hold=hookhold.held(root)).root_commit(
            files, "tuiagent: initialize repository for the tool catalog")
        return store

    def _discover(self) -> GitRunner | None:
        if self._runner is not None and Path(self._runner.git_dir).exists():
            return self._runner
        self._runner = None
        self.refusal = None
        try:
            repo = open_repo(self.root)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            return None
        except (GitDoorRefusal, GitConfigError) as error:
            self.refusal = str(error)
            return None
        if repo.bare or repo.working_tree_dir is None:
            return None
        runner = GitRunner(repo)
        try:
            relative = self.root.relative_to(runner.work_tree).as_posix()
        except ValueError:
            return None
        self._prefix = "" if relative == "." else relative + "/"
        self._runner = runner
        return runner

    def _queries(self) -> GitQueries | None:
        runner = self._discover()
        return GitQueries(runner, self._prefix, self.root) if runner else None

    def status(self) -> GitStatus:
        runner = self._discover()
        if runner is None:
            return GitStatus(False, False, self.refusal or "there is no git repository here", None, None)
        head = runner.head()
        ref = runner.branch_ref()
        branch = ref.removeprefix("refs/heads/") if ref else None
        reason = self._blocking_reason(runner, ref, head)
        return GitStatus(True, reason is None, reason, branch, head)

    def _blocking_reason(self, runner: GitRunner, ref: str | None, head: str | None) -> str | None:
        for marker, reason in IN_PROGRESS:
            if (runner.git_dir / marker).exists():
                return reason
        if ref is None:
            return "HEAD is detached (check out a branch to let the catalog commit)"
        if head is None:
            return "the repository has no commits yet (make a first commit to let the catalog commit)"
        return CommitBuilder(runner, self._prefix, self.min_stale_lock_age_s).live_lock(ref)

    def pending(self) -> dict[str, str]:
        """path -> what awaits a commit and why."""
        return {path: change.describe() for path, change in self._load_journal(check_disk=False)[0].items()}

    def _load_journal(self, own: AbstractSet[str] = frozenset(), *,
                      check_disk: bool = True) -> tuple[dict[str, PendingChange], list[str]]:
        """The journal's entries that are safe to commit (see journalcheck), and notes on the dropped ones."""
        return journalcheck.trusted(self.root, self._journal.load(), own, check_disk=check_disk)

    def journal_subject(self) -> str:
        """The subject of a commit catching up the journal: its one message when all entries share it (a deferred
        `tuiagent: prune tool x`), else a generic one; the body lists each entry either way."""
        messages = {change.message.splitlines()[0] for change in self._load_journal(check_disk=False)[0].values()
                    if change.message.strip()}
        return messages.pop() if len(messages) == 1 else "tuiagent: catch up deferred catalog changes"

    def catch_up(self, message: str = "tuiagent: catch up deferred catalog changes") -> CommitOutcome:
        """Commit the pending changes, if any and if possible."""
        return self.commit({}, message)

    def commit(self, changes: Mapping[str, bytes | None], message: str) -> CommitOutcome:
        normalized = {normalize_catalog_path(path): content for path, content in changes.items()}
        for content in normalized.values():
            if content is not None and not isinstance(content, (bytes, bytearray)):
                raise ValueError("change contents must be bytes or None")
        try:
            with self._mutex, exclusive_lock(self.root / LOCK_FILE):
                journal, dropped = self._load_journal(set(normalized))
                outcome = self._commit_locked({p: bytes(c) if c is not None else None for p, c in normalized.items()},
                                              message, journal)
        except TimeoutError as waited:  # the files are on disk: the next start's catch-up commits them
            return CommitOutcome(False, None, str(waited), f"commit deferred: {waited}")
        if not dropped:
            return outcome
        return CommitOutcome(outcome.committed, outcome.sha, outcome.deferred_reason,
                             "; ".join((outcome.message, *dropped)), (*outcome.notices, *dropped))

    def _commit_locked(self, changes: dict[str, bytes | None], message: str,
                       journal: dict[str, PendingChange]) -> CommitOutcome:
        earlier = {path: change for path, change in journal.items() if path not in changes}
        status = self.status()
        runner = self._runner
        bases = self._base_blobs(runner, list(changes)) if runner and status.head else {}
        now = time.time()
        reason = status.reason if not status.can_commit else "interrupted before its commit finished"
        for path, content in changes.items():
            journal[path] = PendingChange(path, content, message, reason or "", bases.get(path), now,
                                          removed_by_deletion(journal.get(path), content))
        if not journal:
            self._journal.save({})  # drops entries that failed the checks
            return CommitOutcome(False, None, None, "nothing to commit")
        self._journal.save(journal)
        if not status.can_commit or runner is None:
            return self._deferred(journal, status.reason or "git is unavailable", changes)
        builder = CommitBuilder(runner.for_commits(self.root), self._prefix, self.min_stale_lock_age_s, hold=hookhold.held(self.root))
        try:
            result = builder.commit(changes, earlier, message)
        except Deferral as deferral:
            return self._deferred(journal, deferral.reason, changes, deferral.notices)
        except GitFailure as failure:  # a git command failed or hit its bound: the journal keeps the change
            return self._deferred(journal, str(failure), changes, tuple(builder.notices))
        remaining = {path: change for path, change in journal.items() if path not in result.done_paths}
        if not result.index_synced:
            remaining = {path: dataclasses.replace(c, reason="committed; the index is not updated yet")
                         for path, c in remaining.items()}
        self._journal.save(remaining)
        notices = result.notices
        if result.sha is None:
            return CommitOutcome(False, None, None, "; ".join(("nothing to commit", *notices)), notices)
        summary = f"committed {result.sha[:8]}: {result.message.splitlines()[0]}"
        return CommitOutcome(True, result.sha, None, "; ".join((summary, *notices)), notices)

    def _base_blobs(self, runner: GitRunner, paths: list[str]) -> dict[str, str]:
        repo_paths = {f"{self._prefix}{path}": path for path in paths}
        blobs = runner.tree_blobs("HEAD", list(repo_paths))
        return {repo_paths[repo_path]: sha for repo_path, (_, sha) in blobs.items()}

    def _deferred(self, journal: dict[str, PendingChange], reason: str, changes: dict[str, bytes | None],
                  notices: tuple[str, ...] = ()) -> CommitOutcome:
        for path in changes:
            old = journal[path]
            journal[path] = dataclasses.replace(old, reason=reason)
        self._journal.save(journal)
        count = len(journal)
        text = (f"commit deferred: {reason}; {count} change{'s' if count != 1 else ''} kept in {PENDING_FILE} "
                "and committed by a later catalog operation")
        return CommitOutcome(False, None, reason, "; ".join((text, *notices)), notices)

    def head_and_index_blobs(self, path: str) -> tuple[str | None, str | None] | None:
        """(blob in HEAD, blob in the index) of a project path (None when absent); None without a repository."""
        runner = self._discover()
        if runner is None:
            return None
        repo_path = f"{self._prefix}{path}"
        head = runner.tree_blobs("HEAD", [repo_path]).get(repo_path, (None, None))[1] if runner.head() else None
        listed = runner.run("ls-files", "-s", "--", repo_path)
        fields = listed.text.split() if listed.ok else []
        return head, fields[1] if len(fields) >= 2 else None

    def refusals(self, changes: Mapping[str, bytes | None]) -> dict[str, str]:
        """path -> why a commit would refuse that change (unmerged, skip-worktree/sparse, conflict markers); see
        indexguard. Without a repository only conflict markers count."""
        runner = self._discover()
        repo_paths = {f"{self._prefix}{path}": path for path in changes}
        flags = index_flags(runner, list(repo_paths)) if runner else IndexFlags(frozenset(), frozenset())
        found = {path: refusal(repo_path, changes[path], flags) for repo_path, path in repo_paths.items()}
        return {path: reason for path, reason in found.items() if reason is not None}

    def store_blobs(self, paths: list[str]) -> None:
        """Write these project files' contents into git's object store (unreferenced until a commit holds them), so a
        later diff against them works; nothing else changes."""
        runner = self._discover()
        files = [path for path in paths if (self.root / path).is_file() and not (self.root / path).is_symlink()]
        if runner is not None and files:
            runner.run("hash-object", "-w", "--", *(str(self.root / path) for path in files))

    def author_name(self) -> str:
        """The person's git identity (`user.name`), "" when unset."""
        runner = self._discover()
        result = runner.run("config", "user.name") if runner else None
        return result.text if result is not None and result.ok else ""

    def shallow_note(self) -> str | None:
        """In a shallow clone, a sentence saying older versions are not here (and how to get them); else None."""
        queries = self._queries()
        if queries is None or not queries.is_shallow():
            return None
        return ("this is a shallow clone: versions older than its cut-off are not in it; "
                "`git fetch --unshallow` brings the whole history")

    def operation_in_progress(self) -> str | None:
        """The merge, rebase, cherry-pick, revert or bisect under way, with its safe ways out; None when there is none."""
        runner = self._discover()
        if runner is None:
            return None
        return next((reason for marker, reason in IN_PROGRESS if (runner.git_dir / marker).exists()), None)

    def unmerged(self, path: str) -> bool:
        """Whether the index holds unresolved conflict stages for `path` (project-relative)."""
        runner = self._discover()
        repo_path = f"{self._prefix}{path}"
        return runner is not None and repo_path in index_flags(runner, [repo_path]).unmerged

    def pending_change(self, path: str) -> PendingChange | None:
        """The deferred change of `path` in the journal, if any."""
        return self._load_journal(check_disk=False)[0].get(path)

    def history(self, path: str) -> list[HistoryEntry]:
        """Commits touching `path` (project-relative), newest first, including the one that deleted it."""
        queries = self._queries()
        return queries.history(path) if queries else []

    def deleted_files(self, folder: str) -> list[str]:
        """Files once committed directly in `folder` (project-relative), deleted since and absent from HEAD."""
        queries = self._queries()
        return queries.deleted_files(folder) if queries else []

    def show(self, path: str, rev: str) -> bytes | None:
        """Content of `path` at `rev`, None if absent there; ValueError for an unknown revision."""
        queries = self._queries()
        if queries is None:
            raise ValueError("there is no git repository here")
        return queries.show(path, rev)

    def diff(self, path: str, rev_a: str, rev_b: str | None = None) -> str:
        """Unified diff of `path` from `rev_a` to `rev_b` (None = the work tree)."""
        queries = self._queries()
        if queries is None:
            raise ValueError("there is no git repository here")
        return queries.diff(path, rev_a, rev_b)

    def diff_files_since(self, rev: str, paths: list[str]) -> str:
        """Unified diff of the project files matching `paths` (globs) changed since `rev`, committed or not, untracked included."""
        queries = self._queries()
        return queries.diff_files_since(rev, paths) if queries else ""

    def changed_files_since(self, rev: str, paths: list[str]) -> list[str]:
        """Project files matching `paths` (globs) that changed since `rev`, committed or not, untracked included."""
        queries = self._queries()
        return queries.changed_files_since(rev, paths) if queries else []

    def last_version_before_deletion(self, path: str) -> tuple[str, bytes] | None:
        """(commit that wrote it, content) of the version a deletion removed; covers a deferred deletion too."""
        queries = self._queries()
        if queries is None:
            return None
        pending = self._load_journal(check_disk=False)[0].get(normalize_catalog_path(path)) if path.startswith(AGENT_PREFIX) else None
        if pending is not None and pending.content is None and pending.removed is not None:  # hostile input, like
            return "its uncommitted version", pending.removed  # the journal's writes: it goes through the pipeline
        if pending is not None and pending.content is None and queries.runner.head():
            writer = queries.last_commit_for(path)
            content = queries.show(path, "HEAD")
            if writer and content is not None:
                return writer, content
        return queries.last_version_before_deletion(path)

    def folder_blobs(self, folder: str) -> dict[str, str] | None:
        """File name -> blob sha in HEAD of the files directly in `folder`; {} without a repository or commit, None
        when git fails."""
        queries = self._queries()
        if queries is None:
            return {}
        try:
            return queries.folder_blobs(folder)
        except GitFailure:
            return None

    def newest_commits(self, folder: str) -> dict[str, str]:
        """File name -> the newest commit touching it, for the files under `folder` ({} when git cannot say)."""
        queries = self._queries()
        try:
            return queries.newest_commits(folder) if queries else {}
        except GitFailure:
            return {}

    def last_commit_for(self, path: str) -> str | None:
        """The newest commit touching `path`, None if none."""
        queries = self._queries()
        return queries.last_commit_for(path) if queries else None

    def close(self) -> None:
        if self._runner is not None:
            self._runner.repo.close()
