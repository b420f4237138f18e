"""Make the README's screenshots from a real scripted run: the app, the real runtime, and the fake Messages API server.

Writes `screenshots/main.svg`, `authoring.svg`, `diff.svg` and `narrow.svg` (80×24), and a PNG of each when
`rsvg-convert` is installed (`apt-get install -y librsvg2-bin`).

    .venv/bin/python scripts/make_screenshots.py [--out screenshots]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.agent_helpers import FLAKY_TOOL, write_traces  # noqa: E402
from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use  # noqa: E402
from tests.gitrepo import git, init_repo  # noqa: E402
from tui_agent.ui.app import TuiAgentApp  # noqa: E402
from tui_agent.ui.runtime_bridge import LaunchOptions  # noqa: E402
from tui_agent.ui.screens.pickers import ChoiceScreen  # noqa: E402

SIZE = (160, 46)
TOOL_V2 = FLAKY_TOOL.replace(
    "    return sorted(run for run, statuses in outcomes.items() if \"fail\" in statuses and \"pass\" in statuses)",
    "    flaky = [run for run, statuses in outcomes.items() if \"fail\" in statuses and \"pass\" in statuses]\n"
    "    # newest first: the runs people ask about are the recent ones\n"
    "    return sorted(flaky, reverse=True)",
)
ANSWER = """Found it: **1 flaky run** of `deploy`.

| run | monday | tuesday |
|-----|--------|---------|
| r1  | fail   | pass    |

The `lint` run `r3` fails on both days, so it is a real failure, not a flake. From now on
`find_flaky_recipe_runs` answers this in one call instead of four greps."""


def script(api: FakeMessagesAPI) -> None:
    api.enqueue(
        reply(text("I'll read the traces. I keep grepping, sorting and diffing them by hand, so I'll write **one tool** that does all four."),
              tool_use("create_tool", {"name": "find_flaky_recipe_runs", "source": FLAKY_TOOL}), delay_s=0.01),
        reply(tool_use("find_flaky_recipe_runs", {"name": "deploy"})),
        reply(text(ANSWER), delay_s=0.005),
        reply(text("Sure: newest runs first."), tool_use("create_tool", {"name": "find_flaky_recipe_runs", "source": TOOL_V2})),
        reply(text("Updated `find_flaky_recipe_runs`: it lists the newest runs first. The diff pane shows the change.")),
    )


async def wait(predicate, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise TimeoutError("screenshot scene not reached")
        await asyncio.sleep(0.01)


def finished(app: TuiAgentApp) -> int:
    """Turns over so far: every prompt shown, less the one still running."""
    prompts = sum(1 for entry in app.conversation.entries if entry.kind == "user")
    return prompts - 1 if app.turns.running else prompts


async def shoot(out: Path) -> list[Path]:
    folder = Path(tempfile.mkdtemp(prefix="tuiagent-shots-"))
    repo = init_repo(folder / "flaky-demo")
    write_traces(repo)
    git(repo, "add", "traces")
    git(repo, "commit", "-qm", "traces of last week's recipe runs")
    written: list[Path] = []
    with FakeMessagesAPI() as api:
        script(api)
        os.environ.update(ANTHROPIC_API_KEY="screenshot", ANTHROPIC_BASE_URL=api.base_url)
        app = TuiAgentApp(repo, options=LaunchOptions(model="claude-sonnet-4-5", sandbox_tier="bubblewrap", extra={"trust_project": True}))
        async with app.run_test(size=SIZE) as pilot:
            await app.ready.wait()
            app.prompt_area.insert("Which recipe runs are flaky? Look at traces/.")
            await pilot.press("enter")
            await wait(lambda: finished(app) == 1)
            await pilot.pause(0.3)
            block = next(w for w in app.conversation.query("ToolCallBlock") if w.entry.tool == "create_tool")  # type: ignore[attr-defined]
            block.collapsed = False  # unfolded: the source the agent authored, validated and committed
            app.conversation.scroll_to_widget(block, animate=False, top=True)
            await pilot.pause(0.2)
            written.append(save(app, out, "authoring"))
            block.collapsed = True
            await pilot.pause(0.2)
            app.conversation.scroll_end(animate=False)
            app.prompt_area.insert("Can it list the newest runs first?")
            await pilot.pause(0.1)
            written.append(save(app, out, "main"))

            await pilot.press("enter")
            await wait(lambda: finished(app) == 2)
            await pilot.pause(0.3)
            app.action_show_pane("catalog")
            app.catalog_pane.select("find_flaky_recipe_runs")
            await pilot.press("h")
            await wait(lambda: isinstance(app.screen, ChoiceScreen))
            await pilot.press("down", "enter")
            await wait(lambda: app.diff_pane.subject == "find_flaky_recipe_runs")
            await pilot.press("f4", "m", "f5")  # the diff pane, side by side, zoomed
            await pilot.pause(0.3)
            written.append(save(app, out, "diff"))
        written.append(await shoot_narrow(repo, out))
    shutil.rmtree(folder, ignore_errors=True)
    return written


async def shoot_narrow(repo: Path, out: Path) -> Path:
    """80×24: the conversation tab, a queued prompt, and the @ completion menu open."""
    app = TuiAgentApp(repo, options=LaunchOptions(model="claude-sonnet-4-5", sandbox_tier="bubblewrap", extra={"trust_project": True}))
    async with app.run_test(size=(80, 24)) as pilot:
        await app.ready.wait()
        await wait(lambda: app.header.branch != "")
        await pilot.press(*"Compare @mon")
        await wait(lambda: app.query_one("#completion-menu").display)  # type: ignore[attr-defined]
        await pilot.pause(0.2)
        return save(app, out, "narrow")


def save(app: TuiAgentApp, out: Path, name: str) -> Path:
    path = out / f"{name}.svg"
    path.write_text(app.export_screenshot(title=f"tuiagent — {name}"), encoding="utf-8")
    return path


def to_png(svg: Path) -> Path | None:
    """rsvg-convert drops leading non-breaking spaces; a copy with plain spaces and xml:space=preserve renders right."""
    if shutil.which("rsvg-convert") is None:
        return None
    fixed = svg.with_suffix(".tmp.svg")
    fixed.write_text(svg.read_text(encoding="utf-8").replace("<svg ", '<svg xml:space="preserve" ', 1).replace("&#160;", " "), encoding="utf-8")
    png = svg.with_suffix(".png")
    subprocess.run(["rsvg-convert", "-w", "1600", str(fixed), "-o", str(png)], check=True)
    fixed.unlink()
    return png


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=ROOT / "screenshots")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for svg in asyncio.run(shoot(args.out)):
        png = to_png(svg)
        print(svg, png or "(no rsvg-convert: SVG only)")


if __name__ == "__main__":
    main()
