"""The environment catalog commits run git hooks with: the user's, minus every secret (hooks may be rewritable by agent code)."""

from __future__ import annotations

import re
from collections.abc import Mapping

SECRET_NAMES = frozenset({
    "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN",
    "NPM_TOKEN", "PYPI_TOKEN", "HF_TOKEN", "SSH_AUTH_SOCK", "DATABASE_URL", "PGPASSWORD", "MYSQL_PWD",
})
SECRET_PATTERN = re.compile(
    r"(?i)(^|_)(API_?KEY|KEY|TOKEN|SECRET|SECRETS|PASSWORD|PASSWD|PASS|PWD_?SECRET|CREDENTIALS?|AUTH|PRIVATE|SESSION)(_|$)"
    r"|^AWS_|^AZURE_|^GOOGLE_APPLICATION_CREDENTIALS$|^ANTHROPIC_"
)
KEEP = frozenset({"PWD", "OLDPWD", "GPG_TTY", "GNUPGHOME", "SSH_ASKPASS_REQUIRE"})


def is_secret(name: str) -> bool:
    """Whether an environment variable's name says it holds a credential."""
    if name in KEEP:
        return False
    return name in SECRET_NAMES or bool(SECRET_PATTERN.search(name))


def scrubbed(environ: Mapping[str, str]) -> dict[str, str]:
    """`environ` without the variables `is_secret` names."""
    return {name: value for name, value in environ.items() if not is_secret(name)}
