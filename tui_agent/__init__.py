"""tuiagent: a terminal coding assistant whose agent writes its own tools."""

__version__ = "0.1.0"
