"""Claude Code's headless protocol for tuiagent: its names, its stream-json input and control protocol, its prompt flags."""
