"""`tuiagent tools run NAME --args JSON [--json]`: the arguments and the output format are two flags, never one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.test_tools_cli import cli
from tests.ui_support import tool_source


@pytest.fixture
def with_double(repo: Path) -> Path:
    tools = repo / ".agent" / "tools"
    tools.mkdir(parents=True)
    (tools / "double.py").write_text(tool_source("double"))
    return repo


def test_args_and_json_output_are_separate_flags(with_double: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, with_double, "run", "double", "--args", '{"x": 21}', "--json")
    assert code == 0 and json.loads(out)["value"] == 42
    code, out, _ = cli(capsys, with_double, "run", "double", "--args", '{"x": 21}')
    assert (code, out.strip()) == (0, "42")  # text output: the arguments were not taken for an output flag
    code, out, err = cli(capsys, with_double, "run", "double", "--args", '{"x": 21')
    assert code == 2 and out == "" and "--args is not valid JSON" in err
    code, out, err = cli(capsys, with_double, "run", "double", "--json", '{"x": 21}')  # the old spelling: refused, nothing runs
    assert code == 2 and "unrecognized arguments" in err + out
