"""Work-tree checkpoints: git trees written from a temporary index (never the user's index, HEAD, refs or stash)."""

from __future__ import annotations

import shutil
import threading
import weakref
from pathlib import Path

import git

from tui_agent.core.tempfolders import owned_temp
from tui_agent.core.versioning import checkpoint_index
from tui_agent.core.versioning.gitdoor import GitConfigError, GitDoorRefusal, open_repo
from tui_agent.core.versioning.gitrunner import GitFailure, GitRunner

Entry = tuple[str, str]
"""(mode, blob sha) of one file in a checkpoint."""


class Checkpoints:
    """Snapshots of one project's files (tracked and untracked, .gitignore respected, `.agent/` left out).

    Paths are relative to the repository's work tree, which may be a parent of the project.
    """

    def __init__(self, runner: GitRunner, project_root: Path) -> None:
        self.runner = runner
        self.work_tree = runner.work_tree
        prefix = project_root.resolve().relative_to(self.work_tree).as_posix()
        self.prefix = "" if prefix == "." else prefix + "/"
        self.pathspec = [self.prefix or ".", f":(exclude){self.prefix}.agent"]
        # `git add` refuses a plain pathspec naming an ignored path, even an exclusion (a `.gitignore` with `.*` or
        # `.agent`): a wildcard one excludes the same files and is not checked against the ignore rules
        self._add_pathspec = [self.prefix or ".", f":(exclude){_glob_escape(self.prefix)}.agen[t]/*"]
        folder = str(owned_temp("checkpoint"))
        self._index = Path(folder) / "index"
        self._lock = threading.Lock()
        self._saved = checkpoint_index.saved_path(runner.git_dir, self.pathspec)
        weakref.finalize(self, shutil.rmtree, folder, True)

    @classmethod
    def open(cls, project_root: Path) -> "Checkpoints | None":
        """None when the project is not inside a git work tree."""
        try:
            repo = open_repo(project_root)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError, GitDoorRefusal, GitConfigError):
            return None
        if repo.bare or repo.working_tree_dir is None:
            return None
        return cls(GitRunner(repo), project_root)

    def snapshot(self) -> str:
        """The tree id of the project's files as they are now, written from tuiagent's own temporary index.

        That index starts as a copy of the user's and is kept (outside the project, out of agent code's reach)
        between snapshots, and between processes (`checkpoint_index`), so only files changed since the last one are
        hashed again, untracked ones included.
        """
        with self._lock:
            if self._index.exists() or not checkpoint_index.seed(self.runner, self._index, self._saved, self.pathspec):
                tree = self._write_tree()
            else:
                try:
                    tree = self._write_tree()
                except GitFailure:  # the saved index names objects `git gc` has pruned since
                    checkpoint_index.fresh(self.runner, self._index)
                    tree = self._write_tree()
            checkpoint_index.save(self._index, self._saved)
            return tree

    def _write_tree(self) -> str:
        env = {"GIT_INDEX_FILE": str(self._index)}
        nested = [f":(exclude,literal){path}" for path in self.nested_repositories(env)]
        self.runner.must("add", "-A", "--", *self._add_pathspec, *nested, env=env)
        return self.runner.must("write-tree", env=env).text

    def nested_repositories(self, env: dict[str, str]) -> list[str]:
        """Untracked folders holding a repository of their own (`sub/.git`): left out of checkpoints, since adding
        one would make git look into it (its config, its filters) and store it as a gitlink nobody committed."""
        listed = self.runner.must("ls-files", "-z", "--others", "--exclude-standard", "--", *self.pathspec, env=env)
        return [entry.rstrip("/") for entry in listed.stdout.decode("utf-8", errors="surrogateescape").split("\0")
                if entry.endswith("/")]

    def changed_paths(self, before: str, after: str) -> list[str]:
        """Files (repository paths) that differ between two checkpoints, `.agent/` excluded."""
        if before == after:
            return []
        result = self.runner.must("diff-tree", "-r", "-z", "--no-renames", "--name-only", before, after, "--", *self.pathspec)
        return [path for path in result.stdout.decode("utf-8", errors="surrogateescape").split("\0") if path]

    def entries(self, tree: str, paths: list[str]) -> dict[str, Entry]:
        """path -> (mode, blob) for those of `paths` present in `tree` (symlinks and gitlinks included)."""
        found: dict[str, Entry] = {}
        for start in range(0, len(paths), 500):
            chunk = paths[start:start + 500]
            if not chunk:
                continue
            result = self.runner.must("ls-tree", "-z", "--full-tree", tree, "--", *(f":(literal){path}" for path in chunk))
            for record in result.stdout.decode("utf-8", errors="surrogateescape").split("\0"):
                if record:
                    meta, path = record.split("\t", 1)
                    mode, _kind, sha = meta.split()
                    found[path] = (mode, sha)
        return found

    def blob(self, sha: str, path: str) -> bytes:
        """The file's bytes as checked out at `path` (smudge filters and end-of-line conversion applied)."""
        return self.runner.must("cat-file", "--filters", f"--path={path}", sha).stdout

    def store(self, data: bytes) -> str:
        """Write `data` as a blob in the repository's objects (unreferenced, like the checkpoints); its id."""
        return self.runner.must("hash-object", "-w", "--stdin", input=data).text

    def stored(self, sha: str) -> bytes | None:
        """The bytes of a blob `store` wrote; None when `sha` is not a blob here (journals are hostile input)."""
        if not isinstance(sha, str) or len(sha) not in (40, 64) or any(c not in "0123456789abcdef" for c in sha):
            return None
        result = self.runner.run("cat-file", "blob", sha)
        return result.stdout if result.ok else None

    def diff(self, before: str, after: str, paths: list[str] | None = None) -> str:
        """The unified diff between two checkpoints (limited to `paths` when given)."""
        spec = [f":(literal){path}" for path in paths] if paths is not None else self.pathspec
        if paths is not None and not paths:
            return ""
        result = self.runner.must("diff", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", before, after, "--", *spec)
        return result.stdout.decode("utf-8", errors="replace")

    def is_tree(self, sha: str) -> bool:
        """True when `sha` names a tree in this repository (journals are hostile input)."""
        if not isinstance(sha, str) or len(sha) not in (40, 64) or any(c not in "0123456789abcdef" for c in sha):
            return False
        return self.runner.run("cat-file", "-e", f"{sha}^{{tree}}").ok


def _glob_escape(text: str) -> str:
    """`text` matched literally inside a wildcard pathspec."""
    return "".join("\\" + char if char in "*?[]\\" else char for char in text)


__all__ = ["Checkpoints", "Entry", "GitFailure"]
