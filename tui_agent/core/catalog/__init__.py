"""Tool catalog package: import-free so the sandbox can load the stdlib-only inspector; the API lives in `api.py`."""
