"""A generated corpus (Hypothesis, 300 inputs each, 500 command lines): config files, tool files, recipe files and CLI
argument lists never end in a traceback or an unhandled exception, and never change a file outside `.agent/`."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import string
import subprocess
from pathlib import Path

import git
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tui_agent.cli import main
from tui_agent.commands.failures import wants_json
from tui_agent.core.catalog.api import Catalog
from tui_agent.core.catalog.errors import PipelineError
from tui_agent.core.project import Project
from tui_agent.core.recipes.recipefile import parse_recipe
from tui_agent.core.sandbox import Sandbox
from tui_agent.core.settings import SETTINGS, ConfigError, settings_from_text, toml_literal

pytestmark = pytest.mark.timeout(900)  # the four take about 20 s together on a busy 2-core machine
EXAMPLES = 300  # a fixed seed, the same inputs each run; the tool files reach all six outcomes in 300 as in 500
ARGUMENT_EXAMPLES = 500  # command lines: a few slow commands take the time, not their number
CORPUS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None, print_blob=True,
                  suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                         HealthCheck.filter_too_much, HealthCheck.data_too_large])


def user_files(repo: Path) -> dict[str, bytes]:
    """Every file outside `.agent/` and `.git/` (read whole), and the blob git's index stages for each path outside
    `.agent/` (read in-process by GitPython: this runs after every one of thousands of examples)."""
    files: dict[str, bytes] = {}
    for folder, subfolders, names in os.walk(repo):
        subfolders[:] = [name for name in subfolders if name not in (".agent", ".git")]
        for name in names:
            path = Path(folder, name)
            files[str(path.relative_to(repo))] = path.read_bytes()
    with git.Repo(repo) as handle:
        index = handle.index.entries
    staged = sorted(f"{path} {stage} {entry.hexsha}" for (path, stage), entry in index.items() if not path.startswith(".agent/"))
    return files | {"<git index>": "\n".join(staged).encode()}


def run_main(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(argv)
    return code, out.getvalue(), err.getvalue()


def assert_clean_failure(argv: list[str], code: int, out: str, err: str) -> None:
    """A failure is one short message (JSON on stdout with --json), never a traceback or an internal error."""
    assert "Traceback" not in out + err, (argv, err)
    if code != 0 and wants_json(argv):
        assert out.strip(), f"{argv}: a --json failure printed no JSON (stderr: {err})"
        last = json.loads(out.strip().splitlines()[-1]) if out.strip().startswith("{\"") else json.loads(out)
        assert isinstance(last, dict) and "error" in last and "stage" in last, (argv, out)


@pytest.fixture(autouse=True)
def no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", "ANTHROPIC_AUTH_TOKEN"):
        monkeypatch.delenv(variable, raising=False)


# ---------------------------------------------------------------- config files

KEYS = [setting.key.rpartition(".")[2] for setting in SETTINGS] + ["modle", "topk", "max_turn", "mode", "min_level",
                                                                  "protected", "x"]
SECTIONS = sorted({setting.section for setting in SETTINGS if setting.section}) + ["catalgo", "mcp", ""]
SCALARS = st.one_of(st.integers(min_value=-2**70, max_value=2**70), st.floats(allow_nan=True), st.booleans(),
                    st.sampled_from(["ask", "auto", "read-only", "rlimits", "bubblewrap", "claude", ""]),
                    st.text(max_size=12))
VALUES = st.one_of(SCALARS, st.lists(SCALARS, max_size=3), st.dictionaries(st.sampled_from(KEYS), SCALARS, max_size=2))


@st.composite
def config_texts(draw: st.DrawFn) -> str:
    lines: list[str] = []
    for _ in range(draw(st.integers(0, 4))):
        section = draw(st.sampled_from(SECTIONS))
        if section:
            lines.append(f"[{section}]")
        for key in draw(st.lists(st.sampled_from(KEYS), max_size=3, unique=True)):
            lines.append(f"{key} = {toml_literal(draw(VALUES))}")
    text = "\n".join(lines) + "\n"
    if draw(st.booleans()):  # damage it: insert characters that TOML cares about
        position = draw(st.integers(0, len(text)))
        text = text[:position] + draw(st.text(alphabet='[]="\'\n#.=,{}\\x1', max_size=4)) + text[position:]
    if draw(st.integers(0, 19)) == 0:  # a number longer than Python converts
        text += f"[catalog]\ntop_k = {'9' * 5000}\n"
    return text


def test_generated_config_files(repo: Path) -> None:
    config = repo / ".agent" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    before = user_files(repo)
    seen = []

    @CORPUS
    @given(text=config_texts())
    def check(text: str) -> None:
        seen.append(text)
        try:
            settings_from_text(text)
        except ConfigError as error:
            assert "\n" not in str(error) and str(error).startswith(".agent/config.toml")
        config.write_text(text, encoding="utf-8")
        argv = ["--project", str(repo), "config", "--json"]
        code, out, err = run_main(argv)
        assert code in (0, 2), (text, code, err)
        assert_clean_failure(argv, code, out, err)
        assert all(line.startswith("tuiagent: warning: .agent/config.toml") for line in err.splitlines()) if code == 0 \
            else json.loads(out)["stage"] == "config"

    check()
    assert len(seen) >= EXAMPLES and user_files(repo) == before


# ---------------------------------------------------------------- recipe files

RECIPE_KEYS = ["description", "enabled", "priority", "requires", "on", "paths", "debounce_ms", "tool", "args", "prompt",
               "descripton", "x"]
RECIPE_VALUES = st.one_of(SCALARS, st.sampled_from(["command", "file_changed", "session_start", "tool_authored",
                                                    "**/*.py", "../x", "/abs", "{path}", "{args}", "count_lines"]),
                          st.lists(st.one_of(st.text(max_size=8), st.integers()), max_size=3),
                          st.dictionaries(st.text(string.ascii_lowercase, min_size=1, max_size=5), SCALARS, max_size=2))


@st.composite
def recipe_texts(draw: st.DrawFn) -> bytes:
    lines: list[str] = []
    for section in draw(st.lists(st.sampled_from(["", "trigger", "action", "extra"]), max_size=3)):
        if section:
            lines.append(f"[{section}]")
        for key in draw(st.lists(st.sampled_from(RECIPE_KEYS), max_size=4, unique=True)):
            lines.append(f"{key} = {toml_literal(draw(RECIPE_VALUES))}")
    data = ("\n".join(lines) + "\n").encode()
    if draw(st.integers(0, 19)) == 0:  # a number longer than Python converts
        data += b"priority = " + b"9" * 5000 + b"\n"
    if draw(st.booleans()):
        position = draw(st.integers(0, len(data)))
        data = data[:position] + draw(st.binary(max_size=4)) + data[position:]
    return (b"\xef\xbb\xbf" if draw(st.booleans()) else b"") + data


def test_generated_recipe_files() -> None:
    seen = []

    @CORPUS
    @given(name=st.sampled_from(["lint", "review", "help", "Bad Name", "x" * 80, "a-b"]), data=recipe_texts())
    def check(name: str, data: bytes) -> None:
        seen.append(data)
        try:
            recipe = parse_recipe(name, data)
        except PipelineError as error:
            assert error.message and "\n" not in error.stage
        else:
            assert recipe.name == name and recipe.description

    check()
    assert len(seen) >= EXAMPLES


# ---------------------------------------------------------------- tool files

ANNOTATIONS = ["int", "str", "float", "bool", "list[int]", "dict[str, int]", "int | None", "Literal['a', 'b']",
               "object", "'Missing'", "set[int]", "list"]
DEFAULTS = ["", " = 1", " = 'x'", " = None", " = []", " = object()", " = 1.5"]
BODIES = ["return 1", "return x", "raise ValueError('boom')", "import os\n    return os.getcwd()",
          "return open('escape.txt', 'w').write('x')", "return open('README.md').read()", "return x / 0", "pass"]
EXTRAS = ["", "WRITES = True", "NETWORK = True", "DEPENDS_ON = ['*.md']", "import sys", "VALUE = 1 / 0",
          "open('outside.txt', 'w').write('no')", "from typing import Literal", "DEPENDS_ON = 3"]
TESTS = ["", "def test_it():\n    assert True", "def test_it():\n    assert False, 'always'",
         "def test_it():\n    open('made-by-test.txt', 'w').write('x')", "def test_it(fixture):\n    pass"]


@st.composite
def tool_files(draw: st.DrawFn) -> tuple[str, bytes]:
    name = draw(st.sampled_from(["t", "tool_a", "tool_b"]))
    function = draw(st.sampled_from([name, name, name, "other"]))
    params = draw(st.lists(st.sampled_from(["x", "y", "z"]), max_size=3, unique=True))
    signature = ", ".join(f"{param}: {draw(st.sampled_from(ANNOTATIONS))}{draw(st.sampled_from(DEFAULTS))}"
                          for param in params)
    args_doc = "".join(f"\n        {param}: the {param}" for param in params)
    docstring = draw(st.sampled_from([f'"""Do a thing.\n\n    Args:{args_doc}\n    """', '"""Do a thing."""', '']))
    body = draw(st.sampled_from(BODIES))
    source = (f"{draw(st.sampled_from(EXTRAS))}\n\n\ndef {function}({signature}) -> int:\n    {docstring}\n    {body}\n\n\n"
              f"{draw(st.sampled_from(TESTS))}\n")
    data = source.encode()
    if draw(st.integers(0, 4)) == 0:  # damage a few: random bytes somewhere
        position = draw(st.integers(0, len(data)))
        data = data[:position] + draw(st.binary(min_size=1, max_size=3)) + data[position:]
    return name, (b"\xef\xbb\xbf" if draw(st.integers(0, 9)) == 0 else b"") + data


def test_generated_tool_files(repo: Path) -> None:
    project = Project.at(repo)
    loop = asyncio.new_event_loop()
    sandbox = loop.run_until_complete(Sandbox.start(project, warm_workers=2))
    catalog = loop.run_until_complete(Catalog.open(project, sandbox, inspect_timeout_s=10, test_timeout_s=2))
    before = user_files(repo)
    outcomes: dict[str, int] = {}

    @CORPUS
    @given(tool=tool_files())
    def check(tool: tuple[str, bytes]) -> None:
        name, data = tool
        try:
            spec = loop.run_until_complete(catalog.pipeline.validate(name, data, use_cache=True))
            outcomes["ok"] = outcomes.get("ok", 0) + 1
            assert spec.name == name
        except PipelineError as error:
            outcomes[error.stage] = outcomes.get(error.stage, 0) + 1
            assert error.message
        assert user_files(repo) == before

    try:
        check()
    finally:
        loop.run_until_complete(catalog.aclose())
        loop.run_until_complete(sandbox.aclose())
        loop.close()
    assert sum(outcomes.values()) >= EXAMPLES and outcomes.get("ok", 0) > 10, outcomes
    assert {"parse", "inspect"} <= set(outcomes), outcomes


# ---------------------------------------------------------------- CLI argument lists

TOKENS = ["--unused-days", "--dismiss", "--print-prompt", "tools", "list", "show", "history", "diff", "revert", "prune", "restore", "run", "drift", "sandbox",
          "status", "recipes", "config", "--json", "--markdown", "--arg", "x=1", "x=abc", "y=2", "x", "--allow-network",
          "--allow-writes", "--timeout", "0", "-1", "nan", "inf", "1e999", "0.5", "--tier", "bubblewrap", "rlimits",
          "none", "--network", "double", "ghost", "HEAD", "HEAD~1", "--path", "--args", "--tool", "--yes", "--allow",
          "--permission-mode", "ask", "yolo", "--output-format", "json", "text", "--model", "-p", "--continue",
          "--resume", "--init-git", "--sandbox-tier", "--help", "--", "script.py", "{}", '{"x": 1e400}', "[1]",
          '{"x": NaN}', "--json=", "=", "-", "\u00e9\u00e8", "lines", "x" * 300]
FREE_TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)
DOUBLE_TOOL = '''def double(x: int) -> int:
    """Double a number.

    Args:
        x: the number
    """
    return 2 * x
'''
LINES_RECIPE = 'description = "count"\n[trigger]\non = "command"\n[action]\ntool = "double"\nargs = {x = 2}\n'


NAMES = ["double", "ghost", "lines", "", "-x", "../x", "x" * 300, "\u00e9"]
ARG_PAIRS = ["x=1", "x=abc", "x=", "=1", "x=1e400", "y=2", "x=NaN", "x=[1]", "novalue", "x=" + "9" * 5000]
JSON_ARGS = ["{}", '{"x": 1e400}', "[1]", '{"x": NaN}', '{"x": "2"}', "{", '{"x": 3}', '{"x": ' + "9" * 5000 + "}"]
SECONDS = ["0", "-1", "nan", "inf", "1e999", "0.5", "abc", "5"]


@st.composite
def skeletons(draw: st.DrawFn) -> list[str]:
    """A plausible command line of each command group (most parse; the mutations below break some)."""
    name = st.sampled_from(NAMES)
    options = {
        "tools": lambda: ["tools", draw(st.sampled_from(["list", "show", "history", "diff", "revert", "prune", "restore",
                                                          "drift", "suggest", "doctor", "repair"]))]
                         + ([draw(name)] if draw(st.booleans()) else []),
        "tools run": lambda: ["tools", "run", draw(name)] + [part for pair in draw(st.lists(st.sampled_from(ARG_PAIRS), max_size=2))
                                                            for part in ("--arg", pair)]
                             + (["--args", draw(st.sampled_from(JSON_ARGS))] if draw(st.booleans()) else []),
        "sandbox": lambda: ["sandbox", "status"] + (["--tier", draw(st.sampled_from(["rlimits", "bubblewrap", "x"]))]
                                                    if draw(st.booleans()) else []),
        "sandbox run": lambda: ["sandbox", "run", draw(st.sampled_from(["script.py", "missing.py", "."])),
                                "--timeout", draw(st.sampled_from(SECONDS))],
        "recipes": lambda: ["recipes", draw(st.sampled_from(["list", "show", "run", "history", "diff", "prune"]))]
                           + ([draw(st.sampled_from(["lines", "ghost", "Bad Name"]))] if draw(st.booleans()) else []),
        "config": lambda: ["config"] + draw(st.lists(st.sampled_from(["--json", "--markdown"]), max_size=2)),
        "-p": lambda: ["-p", draw(FREE_TEXT)] + draw(st.lists(st.sampled_from(["--resume", "abc", "--continue",
                                                                               "--output-format", "json", "yolo"]), max_size=2)),
    }
    argv = options[draw(st.sampled_from(sorted(options)))]()
    return argv + (["--json"] if draw(st.booleans()) else [])


@st.composite
def argument_lists(draw: st.DrawFn) -> list[str]:
    argv = draw(skeletons())
    for _ in range(draw(st.integers(0, 2))):  # mutate: insert, replace or drop a token
        position = draw(st.integers(1, len(argv)))
        token = draw(st.one_of(st.sampled_from(TOKENS), FREE_TEXT))
        how = draw(st.sampled_from(["insert", "replace", "drop"]))
        if how == "insert":
            argv.insert(position, token)
        elif position < len(argv):
            argv[position:position + 1] = [token] if how == "replace" else []
    # never the TUI or `watch` (both run until a person stops them), never another project folder
    return [token for token in argv if token != "watch" and not token.startswith("--project")]


def test_generated_argument_lists(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (repo / ".agent" / "tools").mkdir(parents=True)
    (repo / ".agent" / "recipes").mkdir(parents=True)
    (repo / ".agent" / "tools" / "double.py").write_text(DOUBLE_TOOL)
    (repo / ".agent" / "recipes" / "lines.toml").write_text(LINES_RECIPE)
    (repo / "script.py").write_text("print('hello from the sandbox')\n")
    subprocess.run(["git", "add", "script.py"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "script"], cwd=repo, check=True)
    monkeypatch.chdir(repo)
    before = user_files(repo)
    results: dict[tuple[str, ...], int] = {}

    @settings(CORPUS, max_examples=ARGUMENT_EXAMPLES)
    @given(argv=argument_lists())
    def check(argv: list[str]) -> None:
        key = tuple(argv)
        if key in results:  # the same command line again: already checked
            return
        full = ["--project", str(repo), *argv]
        code, out, err = run_main(full)
        results[key] = code
        assert isinstance(code, int)
        assert_clean_failure(full, code, out, err)
        assert "internal error" not in err
        assert user_files(repo) == before, argv

    check()
    assert len(results) >= 300, f"only {len(results)} distinct command lines"
    assert any(code == 0 for code in results.values()) and any(code == 2 for code in results.values())

