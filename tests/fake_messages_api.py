"""The fake Messages API (tests/fake_api/), importable under its old name and runnable as a script.

In tests: `from tests.fake_messages_api import FakeMessagesAPI, reply, text, tool_use` (see tests/fake_api/).

As a script (for driving a real terminal against it):

    python tests/fake_messages_api.py --script responses.json [--port N] [--api-key KEY] [--lenient]

where responses.json is a list of items: {"text": "..."}; {"content": [{"type": "text", "text": ...},
{"type": "tool_use", "name": ..., "input": {...}}], "delay_s": 0.05}; {"status": 429};
{"mid_stream_error": "overloaded_error", "content": [...]}; {"cut_stream": true, "content": [...]}; or
{"repeat": {...}} as the last item to answer every further request with that item. It prints
`listening on http://127.0.0.1:PORT`, serves until interrupted, prints every request it refuses
(strict mode) to stderr as it happens, and exits 1 if it refused any.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.fake_api import *  # noqa: E402,F403
from tests.fake_api import FakeMessagesAPI, load_script  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A scripted fake Anthropic Messages API server.")
    parser.add_argument("--script", required=True, help="JSON file: a list of responses")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--api-key", default=None, help="answer 401 unless this key is sent")
    parser.add_argument("--bodies", default=None, help="append each request's JSON body to this file, one a line")
    parser.add_argument("--lenient", action="store_true", help="accept requests the real API would refuse")
    parser.add_argument("--log", default=None, help="append one line to this file per request received")
    args = parser.parse_args(argv)
    with open(args.script, encoding="utf-8") as handle:
        responses, repeat = load_script(json.load(handle))
    api = FakeMessagesAPI(api_key=args.api_key, port=args.port, repeat_last=repeat, strict=not args.lenient,
                          on_violation=lambda message: print(f"refused (400): {message}", file=sys.stderr, flush=True))
    api.enqueue(*responses)
    api.request_log = args.log
    api.body_log = args.bodies
    print(f"listening on {api.base_url}", flush=True)
    try:
        api.serve_forever()
    except KeyboardInterrupt:
        pass
    return 1 if api.take_violations() else 0


if __name__ == "__main__":
    sys.exit(main())
