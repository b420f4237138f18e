"""The git hooks a catalog commit runs (pre-commit, commit-msg, post-commit), as `git commit` would: refused until trust
approves them, held while agent code may have changed what they read, bounded in time, with no secret in reach."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from pathlib import Path

from tui_agent.core.errors import TuiAgentError
from tui_agent.core.versioning.gitdoor import scan
from tui_agent.core.versioning.hookenv import scrubbed
from tui_agent.core.versioning.hookhold import Hold
from tui_agent.core.versioning.gitrunner import GitRunner

HOOK_TIMEOUT_S = 300
COMMIT_HOOKS = ("pre-commit", "commit-msg", "post-commit")  # the hooks a catalog commit runs


class Deferral(TuiAgentError):
    """The commit cannot be made now; `reason` says why (for people)."""

    def __init__(self, reason: str, notices: tuple[str, ...] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.notices = notices


class CommitHooks:
    """One repository's commit hooks (found where `core.hooksPath` says); failures raise Deferral with `notices`."""

    def __init__(self, runner: GitRunner, hold: Hold | None, notices: list[str]) -> None:
        self._runner = runner
        self._hold = hold
        self._notices = notices
        self._hooks_dir: Path | None = None

    def refuse_unapproved(self) -> None:
        """Defer rather than commit without the hooks git would run, until trust approves them (gitdoor)."""
        if self._runner.approved:
            return
        found = scan(self._runner.work_tree, self._runner.git_dir, self._runner.common_dir)
        hooks = sorted({Path(path).name for path, _sha in found.hooks} & set(COMMIT_HOOKS))
        if hooks:
            raise Deferral(f"the git hook{'s' if len(hooks) != 1 else ''} {', '.join(hooks)} run only once you trust "
                           "this project with its git configuration as it is now (`tuiagent trust`); the commit waits",
                           tuple(self._notices))

    def refuse_held(self) -> None:
        """Defer rather than run the user's hooks on project files agent code may have changed (see hookhold)."""
        if self._hold is None:
            return
        hooks = [name for name in COMMIT_HOOKS if self.path(name) is not None]
        if hooks:
            raise Deferral(self._hold.reason(hooks), tuple(self._notices))

    def path(self, name: str) -> Path | None:
        if self._hooks_dir is None:
            located = self._runner.run("rev-parse", "--git-path", "hooks")  # honours core.hooksPath
            folder = Path(located.text) if located.ok else self._runner.git_dir / "hooks"
            self._hooks_dir = folder if folder.is_absolute() else self._runner.work_tree / folder
        hook = self._hooks_dir / name
        return hook if hook.is_file() and os.access(hook, os.X_OK) else None

    def run(self, name: str, args: list[str], env: dict[str, str], *, check: bool = True) -> bool:
        """Run the hook if there is one (True); a failure raises Deferral when `check`."""
        hook = self.path(name)
        if hook is None:
            return False
        hook_env = scrubbed({**os.environ, **env, "GIT_EDITOR": ":"})  # no secret reaches a hook
        try:
            done = run_bounded([str(hook), *args], self._runner.work_tree, hook_env, HOOK_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            if check:
                raise Deferral(f"the {name} hook timed out after {HOOK_TIMEOUT_S:g}s (it and what it started were "
                               "stopped)", tuple(self._notices)) from None
            return True
        except OSError as exc:
            if check:
                raise Deferral(f"the {name} hook could not run: {exc}", tuple(self._notices)) from None
            return True
        if check and done.returncode != 0:
            output = (done.stdout + done.stderr).decode("utf-8", "replace").strip()
            tail = output[-300:] if output else "(no output)"
            raise Deferral(f"the {name} hook failed (exit {done.returncode}): {tail}", tuple(self._notices))
        return True


def run_bounded(argv: list[str], cwd: Path, env: dict[str, str], timeout_s: float) -> subprocess.CompletedProcess[bytes]:
    """Run a hook in a process group of its own, its output captured; past `timeout_s` the whole group is killed
    (a hook's children too, which would otherwise run on holding its output open) and TimeoutExpired raised."""
    with subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, process_group=0) as process:
        try:
            out, err = process.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
            raise
        return subprocess.CompletedProcess(argv, process.returncode, out, err)
