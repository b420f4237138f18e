"""Widgets of the main screen: header, conversation, prompt, catalog and diff panes."""
