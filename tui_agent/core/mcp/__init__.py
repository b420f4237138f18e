"""MCP both ways: `server` serves the live catalog over stdio; `client` starts configured MCP servers for a session."""
