"""Catalog commits are signed like `git commit` would sign them when commit.gpgSign is set (a real gpg key), or deferred with the reason."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gitrepo import git
from tui_agent.core.versioning.gitstore import CatalogGit

pytestmark = pytest.mark.skipif(shutil.which("gpg") is None, reason="gpg is not installed (apt-get install gnupg)")
TOOL = ".agent/tools/tool_a.py"
CONTENT = b'def tool_a() -> int:\n    """A."""\n    return 1\n'


@pytest.fixture
def gnupg_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A throw-away keyring (short path: gpg-agent's socket lives in it) with one passphrase-less key."""
    home = Path(f"/tmp/gpg-{secrets.token_hex(4)}")
    home.mkdir(mode=0o700)
    monkeypatch.setenv("GNUPGHOME", str(home))
    subprocess.run(["gpg", "--batch", "--passphrase", "", "--quick-gen-key", "Dev <dev@example.com>", "default", "default", "never"],
                   check=True, capture_output=True)
    listing = subprocess.run(["gpg", "--batch", "--with-colons", "--list-secret-keys"], check=True, capture_output=True, text=True)
    fingerprint = next(line.split(":")[9] for line in listing.stdout.splitlines() if line.startswith("fpr:"))
    yield fingerprint
    subprocess.run(["gpgconf", "--kill", "gpg-agent"], capture_output=True, env={**os.environ, "GNUPGHOME": str(home)})
    shutil.rmtree(home, ignore_errors=True)


def write(repo: Path) -> None:
    (repo / TOOL).parent.mkdir(parents=True, exist_ok=True)
    (repo / TOOL).write_bytes(CONTENT)


def test_catalog_commits_are_signed_when_commit_gpgsign_is_set(repo: Path, gnupg_home: str) -> None:
    git(repo, "config", "commit.gpgsign", "true")
    git(repo, "config", "user.signingkey", gnupg_home)
    write(repo)
    outcome = CatalogGit(repo).commit({TOOL: CONTENT}, "tuiagent: add tool tool_a")
    assert outcome.committed, outcome.message
    verified = subprocess.run(["git", "verify-commit", "HEAD"], cwd=repo, capture_output=True, text=True)
    assert verified.returncode == 0 and "Good signature" in verified.stderr
    assert git(repo, "log", "-1", "--format=%G?").strip() == "G"


def test_a_commit_that_cannot_be_signed_is_deferred_with_the_reason(repo: Path, gnupg_home: str) -> None:
    git(repo, "config", "commit.gpgsign", "true")
    git(repo, "config", "user.signingkey", "0000000000000000DEADBEEF00000000DEADBEEF")
    head = git(repo, "rev-parse", "HEAD")
    write(repo)
    store = CatalogGit(repo)
    outcome = store.commit({TOOL: CONTENT}, "tuiagent: add tool tool_a")
    assert not outcome.committed and "commit.gpgSign is set and signing the commit failed" in (outcome.deferred_reason or "")
    assert git(repo, "rev-parse", "HEAD") == head and TOOL in store.pending()
    git(repo, "config", "user.signingkey", gnupg_home)  # fixed: the next catalog operation catches up, signed
    assert store.catch_up().committed
    assert git(repo, "log", "-1", "--format=%G?").strip() == "G"


def test_without_gpgsign_commits_stay_unsigned(repo: Path) -> None:
    write(repo)
    assert CatalogGit(repo).commit({TOOL: CONTENT}, "tuiagent: add tool tool_a").committed
    assert git(repo, "log", "-1", "--format=%G?").strip() == "N"
