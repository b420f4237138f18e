"""Undo for everything an agent turn changed: files (any tool, shell included) through checkpoints, the catalog through its stores."""
