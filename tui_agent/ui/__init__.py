"""The Textual user interface: turns core events into pixels."""
