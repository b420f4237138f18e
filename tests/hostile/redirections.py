"""Commands that write a file through a redirection while looking like what a prefix rule allows (issue 23)."""

from __future__ import annotations

REFUSED: list[tuple[str, str]] = [
    ("run_shell(git status:*)", "git status > conftest.py"),
    ("run_shell(git status:*)", "git status>conftest.py"),
    ("run_shell(git status:*)", "git status >> .git/hooks/pre-commit"),
    ("run_shell(git status:*)", "git status &> sitecustomize.py"),
    ("run_shell(git status:*)", "git status &>> x.pth"),
    ("run_shell(git status:*)", "git status >| conftest.py"),
    ("run_shell(git status:*)", "git status >& conftest.py"),
    ("run_shell(git status:*)", "git status <> conftest.py"),
    ("run_shell(git status:*)", "git status 2>&1 > conftest.py"),
    ("run_shell(git status:*)", "git status > /dev/null > conftest.py"),
    ("run_shell(git status:*)", "git status | tee conftest.py"),
    ("run_shell(git status:*)", "git status && git status > conftest.py"),
    ("run_shell(ls:*)", "ls -la 2> setup.py"),
    ("run_shell(ls:*)", "ls -la 2>setup.py"),
    ("run_shell(ls:*)", "ls > ../outside.txt"),
    ("run_shell(pytest:*)", "pytest -q 1> .venv/lib/python3.12/site-packages/evil.pth"),
    ("run_shell(git status > status.txt:*)", "git status > conftest.py"),
]
"""(rule, command): the rule must not approve the command."""

ALLOWED: list[tuple[str, str]] = [
    ("run_shell(git status:*)", "git status > /dev/null"),
    ("run_shell(git status:*)", "git status 2>/dev/null"),
    ("run_shell(git status:*)", "git status &>/dev/null"),
    ("run_shell(git status:*)", "git status 2>&1"),
    ("run_shell(git status:*)", "git status >&2"),
    ("run_shell(git status:*)", "git status < input.txt"),
    ("run_shell(git status > status.txt:*)", "git status > status.txt"),
    ("run_shell(git status > conftest.py)", "git status > conftest.py"),
]
"""(rule, command): harmless redirections, or the very redirection the rule names, stay covered."""
