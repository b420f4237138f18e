"""A package's public names, each imported with its own module on first use (PEP 562's module `__getattr__`)."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_exports(package: str, home_of: dict[str, str]) -> Callable[[str], Any]:
    """The `__getattr__` of `package`: a name in `home_of` comes from `package.<its module>` (or the module named in
    full when dotted), then stays put."""

    def attribute(name: str) -> Any:
        module = home_of.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module if "." in module else f"{package}.{module}"), name)
        setattr(importlib.import_module(package), name, value)
        return value

    return attribute
