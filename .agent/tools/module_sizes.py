"""List the Python modules over this project's line budget (each module should stay under ~400 lines)."""

from pathlib import Path



def _count_lines(text: str) -> int:
    return len(text.splitlines())


def module_sizes(max_lines: int = 400, folder: str = "tui_agent", show_all: bool = False) -> list[dict]:
    """List the modules of a folder that are longer than the line budget, longest first.

    Args:
        max_lines: The budget; modules with more lines are listed.
        folder: The folder to scan, relative to the project root (e.g. "tui_agent" or "tests").
        show_all: List every module with its size, not only those over the budget.
    """
    root = Path(folder)
    if not root.is_dir():
        raise ValueError(f"no folder {folder!r} under {Path.cwd()}")
    sizes = []
    for path in sorted(root.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        lines = _count_lines(path.read_text(encoding="utf-8", errors="replace"))
        if show_all or lines > max_lines:
            sizes.append({"path": path.as_posix(), "lines": lines, "over_by": max(0, lines - max_lines)})
    return sorted(sizes, key=lambda item: (-item["lines"], item["path"]))


def test_module_sizes() -> None:
    assert _count_lines("a\nb\n") == 2 and _count_lines("") == 0
    everything = module_sizes(show_all=True)
    assert everything and all(item["path"].startswith("tui_agent/") for item in everything)
    assert [item["lines"] for item in everything] == sorted((item["lines"] for item in everything), reverse=True)
    over = module_sizes(max_lines=0)
    assert len(over) == len([item for item in everything if item["lines"] > 0])
    assert all(item["over_by"] == item["lines"] for item in over)
    try:
        module_sizes(folder="no/such/folder")
    except ValueError as error:
        assert "no/such/folder" in str(error)
    else:
        raise AssertionError("a missing folder must raise")
