"""Discover at scale: ``Canal.discover`` of one stdio MCP test server offering hundreds of
realistic tools, against the bare ``tools/list`` round trip of the MCP SDK's own client.

Both sides start the server (a new process), initialise the session, page through every
tool (50 a page) and close; canal then also writes its cache (one ``.meta`` and one
``.rules`` file per tool, the index and ``tools-index.md``). ``rediscover`` runs discover
again with nothing changed on the server.
"""

from __future__ import annotations

import asyncio
import cProfile
import io
import pstats
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.rows import median_ms, row
from bench.tools import realistic_tool
from tests.conftest import Toolbox

ROOT = Path(__file__).resolve().parent.parent
PAGE = 50


def sdk_list(server: dict[str, Any]) -> int:
    """Start ``server`` with the MCP SDK's stdio client, list every tool, close; the count."""
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def listed() -> int:
        params = StdioServerParameters(command=server["command"], args=server["args"])
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            count, cursor = 0, None
            while True:
                page = await session.list_tools(cursor=cursor)
                count += len(page.tools)
                cursor = page.nextCursor
                if not cursor:
                    return count

    return asyncio.run(listed())


def timings(tools: int, repeats: int) -> dict[str, list[float]]:
    """Seconds of ``repeats`` SDK listings, first discovers (empty cache) and rediscovers."""
    from canal import Canal

    out: dict[str, list[float]] = {"sdk": [], "discover": [], "rediscover": []}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        box = Toolbox(root)
        box.add("bench", [realistic_tool(i) for i in range(tools)], page_size=PAGE)
        sdk_list(box.servers["bench"])  # warm-up: the SDK's and the server's first imports
        canal = Canal(workflows=root / "workflows", home=root / ".canal",
                      mcp_config=root / ".mcp.json", checkpointer="memory:")
        for _ in range(repeats):
            began = time.perf_counter()
            assert sdk_list(box.servers["bench"]) == tools
            out["sdk"].append(time.perf_counter() - began)
            shutil.rmtree(root / ".canal", ignore_errors=True)
            began = time.perf_counter()
            assert canal.discover()["added_count"] == tools
            out["discover"].append(time.perf_counter() - began)
            began = time.perf_counter()
            assert canal.discover()["changed_count"] == 0
            out["rediscover"].append(time.perf_counter() - began)
        canal.close()
    return out


def profile_rediscover(tools: int, top: int = 15) -> str:
    """cProfile's cumulative table of one rediscover of ``tools`` unchanged tools."""
    from canal import Canal

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        Toolbox(root).add("bench", [realistic_tool(i) for i in range(tools)], page_size=PAGE)
        with Canal(workflows=root / "workflows", home=root / ".canal",
                   mcp_config=root / ".mcp.json", checkpointer="memory:") as canal:
            canal.discover()
            profiler = cProfile.Profile()
            profiler.runcall(canal.discover)
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("cumulative").print_stats(top)
    return text.getvalue()


def discover_rows(tools: int, repeats: int) -> list[dict[str, Any]]:
    """``discover_<tools>`` and ``rediscover_<tools>`` against the SDK's bare listing."""
    times = timings(tools, repeats)
    sdk, first, again = (median_ms(times[k]) for k in ("sdk", "discover", "rediscover"))
    how = (f"{tools} realistic tools on one stdio test server, {PAGE} a page; medians of "
           f"{repeats}; baseline: MCP SDK client start + initialize + tools/list pages + "
           f"close ({sdk:.0f} ms)")
    return [row(f"discover_{tools}", first, sdk, "ms", None,
                f"Canal.discover, empty cache: {first:.0f} ms; {how}"),
            row(f"rediscover_{tools}", again, sdk, "ms", None,
                f"Canal.discover again, nothing changed: {again:.0f} ms; {how}")]


def measure(quick: bool) -> list[dict[str, Any]]:
    return discover_rows(500, 1 if quick else 5)


if __name__ == "__main__":  # python -m bench.discover: where a rediscover's time goes
    print(profile_rediscover(int(sys.argv[1]) if len(sys.argv) > 1 else 500))
