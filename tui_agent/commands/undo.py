"""`tuiagent --undo`: undo the last agent turn of the latest session, with the same rules as /undo in the app."""

from __future__ import annotations

import argparse
import json
import sys

from tui_agent.core.agent.permissions import deny_all
from tui_agent.core.agent.sessions import SessionNotFound
from tui_agent.core.project import ConfigError


async def run_undo(args: argparse.Namespace) -> int:
    """0 when the turn was undone; 1 when nothing was (a conflict shows the diff); 2 when the project cannot be opened.
    With `--output-format json`, the result is one JSON object on stdout (UndoResult.to_json)."""
    from tui_agent.core.runtime import open_runtime

    try:
        runtime = await open_runtime(args.project, approve=deny_all, continue_latest=True, sandbox_tier=args.sandbox_tier,
                                     ask_init_git=lambda project: False)
    except (SessionNotFound, ConfigError, ValueError) as error:
        print(f"tuiagent --undo: {error}", file=sys.stderr)
        return 2
    try:
        if runtime.core.undo is None or runtime.core.session is None:
            why = next((problem for problem in runtime.core.problems if "GIT_DIR" in problem or "GIT_WORK_TREE" in problem),
                       "the project is not in a git repository, so turns were not checkpointed")
            print(f"tuiagent --undo: {why}", file=sys.stderr)
            return 2
        if runtime.core.undo.finished_at_open:  # the undo asked for before was killed part-way: finishing it is this one
            print(runtime.core.undo.finished_at_open)
            return 0
        runtime.core.undo.progress = lambda done, total: print(f"undo: {done} of {total} files put back", file=sys.stderr,
                                                          flush=True)
        result = await runtime.core.undo.undo_last(runtime.core.session)
        if getattr(args, "output_format", "text") == "json":  # git-ignored files put back and not undone, listed
            print(json.dumps(result.to_json()))
        else:
            if result.conflict_diff:
                print(result.conflict_diff, end="" if result.conflict_diff.endswith("\n") else "\n")
            print(result.message, file=sys.stdout if result.ok else sys.stderr)
        if result.ok:  # a resumed conversation tells the model, as /undo does in the app
            runtime.core.session.append_message({"role": "user", "content": [{"type": "text", "text": result.note_for_model}]})
        return 0 if result.ok else 1
    finally:
        await runtime.aclose()
