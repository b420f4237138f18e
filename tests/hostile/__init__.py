"""Hostile and buggy snippets for the sandbox security suite."""
