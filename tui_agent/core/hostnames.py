"""Host names in network grants: checking a list (a tool's NETWORK, `[sandbox] network`), matching `*.` wildcards,
and saying what a grant reaches (no imports from the rest of tuiagent: the settings and the sandbox both use it)."""

from __future__ import annotations

import re
from typing import Any, Union

Grant = Union[bool, tuple[str, ...]]
"""As sandbox.policy.NetworkGrant: False no network, True any public name, a tuple those names only."""

_LABEL = re.compile(r"^(?!-)[a-z0-9-]{1,63}(?<!-)$")


def check_names(value: Any, origin: str) -> Grant:
    """A grant from a tool's `NETWORK` or the config's `[sandbox] network`: a bool or a list of host names.

    Raises ValueError with a one-line message naming `origin` when the value is neither."""
    if isinstance(value, bool):
        return value
    if not isinstance(value, (list, tuple)) or not all(isinstance(item, str) for item in value):
        raise ValueError(f"{origin} must be True, False or a list of host names, not {value!r}")
    names: list[str] = []
    for raw in value:
        name = raw.strip().lower().rstrip(".")
        bare = name[2:] if name.startswith("*.") else name
        if not bare or len(bare) > 253 or not all(_LABEL.match(label) for label in bare.split(".")):
            raise ValueError(f"{origin}: {raw!r} is not a host name (letters, digits, '-', dots; '*.' may lead)")
        if name not in names:
            names.append(name)
    return tuple(names) if names else False


def configured_names(value: Any) -> tuple[str, ...]:
    """The names of `[sandbox] network` (validated when the settings were read; anything else grants none)."""
    try:
        grant = check_names(list(value), "sandbox.network")
    except (TypeError, ValueError):
        return ()
    return grant if isinstance(grant, tuple) else ()


def grant_of(value: Any) -> Grant:
    """A stored grant (True, False or a list of names, as the inspector reported it) back as a Grant; anything
    malformed grants no network."""
    try:
        return check_names(value, "NETWORK")
    except ValueError:
        return False


def describe_grant(grant: Grant) -> str:
    """How an approval or a description says what a grant reaches."""
    if grant is True:
        return "any public host name"
    if not grant:
        return "no network"
    return "only " + ", ".join(grant)


def name_granted(host: str, grant: Grant) -> bool:
    """Whether `host` is covered: `*.example.com` covers any name below example.com, not example.com itself."""
    if grant is True:
        return True
    if not grant:
        return False
    host = host.lower().rstrip(".")
    for name in grant:
        if host == name or (name.startswith("*.") and host.endswith(name[1:])):
            return True
    return False


