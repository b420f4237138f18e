"""`tuiagent acp`: an Agent Client Protocol (v1) agent over stdio, driving the same runtime as the TUI and `-p`."""
