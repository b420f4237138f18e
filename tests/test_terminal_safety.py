"""Control characters in untrusted text are drawn as symbols by Rich and Textual once the app installs its tables."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text
from textual.content import Content

from tui_agent.core.textsafety import CONTROL_PICTURES, visible_controls
from tui_agent.ui.terminal_safety import draw_control_characters_visibly

ALLOWED = {"\t", "\n"}


def is_control(char: str) -> bool:
    code = ord(char)
    return char not in ALLOWED and (code < 0x20 or 0x7F <= code < 0xA0)


def test_escape_shows_as_its_symbol_and_offsets_hold() -> None:
    assert visible_controls("a\x1b[31mb\x9bc\x7f") == "a␛[31mb\ufffdc␡"
    assert visible_controls("tab\tnew\nline") == "tab\tnew\nline"
    assert all(len(picture) == 1 for picture in CONTROL_PICTURES.values())


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=0x2FF), max_size=60))
def test_rich_and_textual_never_pass_a_control_character_through(text: str) -> None:
    draw_control_characters_visibly()
    assert not any(is_control(char) for char in Text(text).plain)
    assert not any(is_control(char) for char in Content(text).plain)
    console = Console(width=80, record=True, color_system=None, force_terminal=True)
    console.print(Text(text), end="")
    assert "\x1b" not in console.export_text(styles=False)
