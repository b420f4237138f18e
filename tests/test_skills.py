"""Agent Skills read: SKILL.md folders of a trusted project and of the home are offered by name and description,
their body and files are loaded only through use_skill, and a malformed skill is named, never offered."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use
from tui_agent.cli import main

BODY = "Step one: run the secret-sauce script. UNIQUE-BODY-MARKER"


def skill(base: Path, folder: str, front: str, body: str = BODY, files: dict[str, str] | None = None) -> Path:
    where = base / folder
    where.mkdir(parents=True)
    (where / "SKILL.md").write_text(f"---\n{front}\n---\n{body}\n")
    for name, content in (files or {}).items():
        (where / name).parent.mkdir(parents=True, exist_ok=True)
        (where / name).write_text(content)
    return where


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


def system_text(api: FakeMessagesAPI) -> str:
    return json.dumps(api.requests[0].body["system"])


def results(api: FakeMessagesAPI) -> list[str]:
    return [json.dumps(block["content"]) for message in api.requests[-1].messages if message["role"] == "user"
            for block in message["content"] if isinstance(block, dict) and block.get("type") == "tool_result"]


def test_skills_are_listed_then_loaded_on_use_with_their_files(repo: Path, home: Path, api: FakeMessagesAPI,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    skill(repo / ".agents" / "skills", "pdf-tools", "name: pdf-tools\ndescription: Fill in PDF forms.\nmetadata:\n  v: 1",
          files={"reference.md": "FORM-FIELDS-REFERENCE"})
    skill(repo / ".claude" / "skills", "wrong-folder", "name: other-name\ndescription: Mismatched.")
    skill(repo / ".claude" / "skills", "no-front", "", body="just text")
    (repo / ".claude" / "skills" / "no-front" / "SKILL.md").write_text("no frontmatter here\n")
    skill(home / ".agents" / "skills", "home-notes", "name: home-notes\ndescription: 'Take notes the home way.'")
    api.enqueue(reply(tool_use("use_skill", {"name": "pdf-tools"})),
                reply(tool_use("use_skill", {"name": "pdf-tools", "resource": "reference.md"})),
                reply(tool_use("use_skill", {"name": "pdf-tools", "resource": "../../../README.md"})),
                reply(text("Done.")))
    assert main(["--project", str(repo), "-p", "fill the form"]) == 0
    system = system_text(api)
    assert "pdf-tools: Fill in PDF forms." in system and "home-notes: Take notes the home way." in system
    assert "UNIQUE-BODY-MARKER" not in system and "FORM-FIELDS-REFERENCE" not in system  # loaded only on use
    assert "other-name" not in system and "wrong-folder" not in system
    tools = {tool["name"]: tool for tool in api.requests[0].body["tools"]}
    assert tools["use_skill"]["input_schema"]["properties"]["name"]["enum"] == ["home-notes", "pdf-tools"]
    loaded, resource, refused = results(api)
    assert "UNIQUE-BODY-MARKER" in loaded and "reference.md" in loaded
    assert "FORM-FIELDS-REFERENCE" in resource
    assert "is not one of skill pdf-tools's files" in refused
    err = capsys.readouterr().err
    assert "name 'other-name' does not match its folder 'wrong-folder'" in err
    assert "no-front/SKILL.md: no frontmatter" in err


def test_an_untrusted_projects_skills_are_not_offered(repo: Path, home: Path, untrusted_config: Path,
                                                      api: FakeMessagesAPI) -> None:
    skill(repo / ".agents" / "skills", "project-only", "name: project-only\ndescription: From the clone.")
    skill(home / ".claude" / "skills", "mine", "name: mine\ndescription: The person's own.")
    api.enqueue(reply(text("Hello.")))
    assert main(["--project", str(repo), "-p", "hi"]) == 0
    system = system_text(api)
    assert "mine: The person's own." in system and "project-only" not in system


def test_no_skills_no_tool(repo: Path, home: Path, api: FakeMessagesAPI) -> None:
    api.enqueue(reply(text("Hello.")))
    assert main(["--project", str(repo), "-p", "hi"]) == 0
    assert "use_skill" not in {tool["name"] for tool in api.requests[0].body["tools"]}
    assert "Agent Skills" not in system_text(api)
