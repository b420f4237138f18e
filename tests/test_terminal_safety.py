"""Control characters in untrusted text are drawn as symbols by Rich and Textual once the app installs its tables."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text
from textual.content import Content

from tests.pty_output import on_a_terminal
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


HOSTILE_TOOL = '''"""Print hostile bytes."""


def shout() -> str:
    """Return text that would retitle the window and clear the screen."""
    print("out\\x1b]0;PWNED\\x07 x")
    return "value\\x1b[2J done"
'''


def test_cli_commands_show_control_characters_of_agent_output_on_a_terminal(tmp_path: Path) -> None:
    import subprocess
    import sys

    from tests.gitrepo import init_repo

    repo = init_repo(tmp_path / "project")
    (repo / ".agent" / "tools").mkdir(parents=True)
    (repo / ".agent" / "tools" / "shout.py").write_text(HOSTILE_TOOL)
    (repo / "hostile.py").write_text("import sys\nprint('a\\x1b[2J b')\nsys.stderr.write('c\\x1b]0;T\\x07 d\\n')\n")
    cli = [sys.executable, "-m", "tui_agent.cli", "--project", str(repo)]
    shown = on_a_terminal([*cli, "tools", "run", "shout"])[1] + on_a_terminal([*cli, "sandbox", "run", str(repo / "hostile.py")])[1]
    assert "value␛[2J done" in shown and "a␛[2J b" in shown and "c␛]0;T␇ d" in shown, shown
    assert "\x1b" not in shown and "\x07" not in shown
    piped = subprocess.run([*cli, "sandbox", "run", str(repo / "hostile.py")], capture_output=True, text=True, timeout=120)
    assert "a\x1b[2J b" in piped.stdout  # a pipe gets the bytes as they are
