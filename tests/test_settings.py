"""`.agent/config.toml` validation: one precise line per problem, exit code 2 in every front end, README generated from the table."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from tests.ui_support import SIZE, make_app
from tui_agent.cli import main
from tui_agent.core.agent.permissions import PERMISSION_MODES
from tui_agent.core.sandbox.policy import TIER_LEVELS
from tui_agent.core.settings import SETTINGS, ConfigError, Settings, markdown_table, settings_from_text

README = Path(__file__).resolve().parent.parent / "README.md"

BAD_CONFIGS = [
    ('sandbox = "x"\n', 1, '[sandbox] must be a table, not the string "x"'),
    ('[catalog]\ntoken_budget = "abc"\n', 2, 'catalog.token_budget must be an integer, not the string "abc"'),
    ('model = 5\n', 1, "model must be a string, not the integer 5"),
    ('[agent]\n\nmax_turns = true\n', 3, "agent.max_turns must be an integer, not the boolean true"),
    ('[catalog]\ntoken_budget = -5\n', 2, "catalog.token_budget = -5 is below the minimum 0"),
    ('[catalog]\ntop_k = -1\n', 2, "catalog.top_k = -1 is below the minimum 0"),
    ('[agent]\nmax_turns = -3\n', 2, "agent.max_turns = -3 is below the minimum 1"),
    ('[catalog]\ntop_k = 1e999\n', 2, "catalog.top_k must be an integer, not an infinite or NaN number"),
    ('[permissions]\nmode = "yolo"\n', 2, 'permissions.mode = "yolo" is not allowed; use one of "ask", "auto", "read-only"'),
    ('[sandbox]\nmin_level = "none"\n', 2, 'sandbox.min_level = "none" is not allowed; use one of "rlimits", "bubblewrap"'),
    ('model = "x\n', 1, "invalid TOML at column 11"),
    ('[catalog]\ntop_k = 1\n[catalog]\n', 3, "invalid TOML"),
    ('[catalog]\ntop_k = ' + '9' * 5000 + '\n', 2, "a number is too long"),
    ('[sandbox]\nprotected = ["a", 1]\n', 2, "sandbox.protected must be a list of strings; item 2 is the integer 1; write e.g. protected = []"),
    ('[sandbox]\nenv = "HOME"\n', 2, 'sandbox.env must be a list of strings, not the string "HOME"'),
    ('[web]\nsearch = 1\n', 2, "web.search must be true or false, not the integer 1"),
    ('[web]\nsearch_max_uses = 51\n', 2, "web.search_max_uses = 51 is above the maximum 50"),
    ('[agent]\neffort = "huge"\n', 2, 'agent.effort = "huge" is not allowed; use one of "low", "medium", "high"'),
    ('[catalog]\ntop_k = 3\n[sandbox]\nnetwork = ["exa mple.com"]\n[agent]\nmax_turns = 0\n', 4, "sandbox.network"),
]


@pytest.mark.parametrize("text,line,message", BAD_CONFIGS)
def test_each_invalid_config_is_one_line_naming_file_line_and_fix(text: str, line: int, message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        settings_from_text(text)
    error = caught.value
    assert error.line == line and message in str(error), str(error)
    assert str(error).startswith(f".agent/config.toml:{line}: ") and "\n" not in str(error)
    assert re.search(r"write e\.g\.|use one of|fix the syntax|header|shorter", str(error)), "the message says how to fix it"


def test_misspelled_keys_warn_with_the_closest_known_key() -> None:
    settings = settings_from_text('modle = "m"\n[catalgo]\ntop_k = 3\n[catalog]\ntopk = 9\n[agent]\nmax_turn = 4\n')
    assert settings == Settings(extra=settings.extra, warnings=settings.warnings)  # nothing applied
    assert list(settings.warnings) == [
        ".agent/config.toml:1: unknown setting 'modle' is ignored; did you mean 'model'?",
        ".agent/config.toml:2: unknown setting 'catalgo' is ignored; did you mean 'catalog'?",
        ".agent/config.toml:5: unknown setting 'catalog.topk' is ignored; did you mean 'catalog.top_k'?",
        ".agent/config.toml:7: unknown setting 'agent.max_turn' is ignored; did you mean 'agent.max_turns'?",
    ]


def test_valid_values_are_applied_and_dotted_keys_work() -> None:
    settings = settings_from_text('model = "m"\ncatalog.top_k = 0\n[permissions]\nmode = "auto"\n[agent]\nmax_turns = 1\n')
    assert (settings.model, settings.catalog_top_k, settings.permission_mode, settings.max_turns) == ("m", 0, "auto", 1)
    assert settings.warnings == () and settings.catalog_token_budget == 2000


def test_the_model_is_the_one_place_for_defaults_and_choices() -> None:
    fields = {name: info.get_default(call_default_factory=True) for name, info in Settings.model_fields.items()}
    for setting in SETTINGS:
        assert fields[setting.field_name] == setting.default, setting.key
        if setting.default is not None:
            assert settings_from_text("").__getattribute__(setting.field_name) == setting.default
    assert set(fields) - {setting.field_name for setting in SETTINGS} == {"extra", "warnings"}
    assert set(next(s for s in SETTINGS if s.key == "permissions.mode").choices) == set(PERMISSION_MODES)
    assert set(next(s for s in SETTINGS if s.key == "sandbox.min_level").choices) == set(TIER_LEVELS)


def test_readme_configuration_section_is_the_generated_table(capsys: pytest.CaptureFixture[str]) -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("<!-- settings:begin -->\n", 1)[1].split("\n<!-- settings:end -->", 1)[0]
    assert section == markdown_table(), "README is stale: paste the output of `tuiagent config --markdown`"
    assert main(["config", "--markdown"]) == 0
    assert capsys.readouterr().out.rstrip("\n") == markdown_table()
    for setting in SETTINGS:
        assert f"`{setting.key}`" in section


def write_config(repo: Path, text: str) -> None:
    (repo / ".agent").mkdir(exist_ok=True)
    (repo / ".agent" / "config.toml").write_text(text, encoding="utf-8")


@pytest.mark.parametrize("command", [["tools", "list"], ["recipes", "list"], ["sandbox", "status"], ["config"],
                                     ["-p", "hello"], ["tools", "run", "x"], ["watch"]])
def test_every_command_stops_with_the_line_and_exit_2(repo: Path, command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    write_config(repo, '[catalog]\ntoken_budget = "abc"\n')
    before = sorted(path.name for path in (repo / ".agent").iterdir())
    assert main(["--project", str(repo), *command]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == ('tuiagent: .agent/config.toml:2: catalog.token_budget must be an integer, not the string "abc"; '
                            "write e.g. token_budget = 2000\n")
    assert sorted(path.name for path in (repo / ".agent").iterdir()) == before, "nothing was started or created"
    assert main(["--project", str(repo), *command, "--json" if command[0] != "-p" else "--output-format=json"]) == 2
    failure = json.loads(capsys.readouterr().out)
    assert failure["stage"] == "config" and failure["line"] == 2 and "token_budget" in failure["error"]


def test_warnings_go_to_stderr_and_the_command_runs(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_config(repo, "[catalgo]\ntop_k = 3\n")
    assert main(["--project", str(repo), "tools", "list", "--json"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == []
    assert "tuiagent: warning: .agent/config.toml:1: unknown setting 'catalgo' is ignored; did you mean 'catalog'?" in captured.err


async def test_the_tui_shows_the_config_error_instead_of_a_traceback(repo: Path) -> None:
    write_config(repo, "[agent]\nmax_turns = true\n")
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(app.ready.wait(), 30)
        await pilot.pause()
        notices = [entry.text for entry in app.conversation.entries if entry.kind == "notice"]
        assert app.runtime is None
        assert any(".agent/config.toml:2: agent.max_turns must be an integer, not the boolean true" in notice
                   and "Traceback" not in notice for notice in notices), notices


async def test_the_tui_shows_config_warnings(repo: Path) -> None:
    write_config(repo, "[catalog]\ntopk = 3\n")
    app = make_app(repo)
    async with app.run_test(size=SIZE) as pilot:
        await asyncio.wait_for(app.ready.wait(), 30)
        await pilot.pause()
        notices = [entry.text for entry in app.conversation.entries if entry.kind == "notice"]
        assert any("did you mean 'catalog.top_k'?" in notice for notice in notices), notices
