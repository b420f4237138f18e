"""Benchmark: how much of what the prompt cache could serve it does serve, over one long agent turn.

A 30-request turn against the fake Messages API (which models the documented cache rules, see
tests/fake_api/cache.py) with a 40-tool catalog of which the top 10 go into `tools`: tools outside the top K
called through call_tool, top-K tools called directly, files read and grepped, and a tool authored half-way
and then called by its name. For each request the ideal is the tokens of the longest prefix it shares with an
earlier request; the benchmark prints the ideal, the tokens the cache read, the ratio, and the input cost.

    .venv/bin/python benchmarks/bench_prompt_cache.py [--requests 30] [--tools 40] [--top-k 10]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.cache_scenario import run_turn_for_cache  # noqa: E402
from tests.gitrepo import init_repo  # noqa: E402
from tui_agent.core.agent.pricing import DEFAULT_MODEL, price_for  # noqa: E402


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--tools", type=int, default=40)
    parser.add_argument("--top-k", type=int, default=10)
    parser.add_argument("--lenient", action="store_true", help="let the fake server accept invalid requests (to measure older code)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-cache-") as temp:
        repo = init_repo(Path(temp) / "project")
        figures, _ = await run_turn_for_cache(repo, requests=args.requests, tools=args.tools, top_k=args.top_k, strict=not args.lenient)
    price = price_for(DEFAULT_MODEL)
    assert price is not None
    total = figures.read + figures.written + figures.uncached
    cost = (figures.read * price.cache_read + figures.written * price.cache_write + figures.uncached * price.input) / 1e6
    print(f"requests in the turn:        {figures.requests} (finished: {figures.finished}, tool errors: {figures.tool_errors})")
    print(f"input tokens sent:           {total:,}")
    print(f"ideal (shared-prefix) tokens: {figures.ideal:,}")
    print(f"cache-read tokens:           {figures.read:,}")
    print(f"cache-written tokens:        {figures.written:,}")
    print(f"uncached tokens:             {figures.uncached:,}")
    print(f"cache read / ideal:          {figures.ratio:.1%}  (goal: at least 90%)")
    print(f"input cost at {DEFAULT_MODEL} prices: ${cost:.4f}  (without the cache: ${total * price.input / 1e6:.4f})")
    return 0 if figures.ratio >= 0.9 else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
