"""The agent: Messages API client, the loop, built-in tools, prompt, permissions and sessions."""
