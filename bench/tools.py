"""Tool figures: discover and search time for hundreds of tools, and the context an agent
reads.

Context compares what canal hands an agent for one task (the index, one tool's ``meta``,
one workflow step) against injecting every tool's full schema, as an MCP host does.
Tokens are estimated as characters / 4 (no tokenizer is installed offline).

Usage: ``.venv/bin/python bench/tools.py [--tools N]``. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from canal import Canal  # noqa: E402
from canal.tools.search import _RANKINGS  # noqa: E402
from tests.conftest import Toolbox, schema  # noqa: E402


def realistic_tool(i: int) -> dict:
    """A CRUD-style tool shaped like the example platform's, with system fields."""
    return {"name": f"resource_{i:03d}_update",
            "description": f"Update resource family {i}: change its name, owner, state and "
                           "labels. Returns the updated record.",
            "annotations": {"idempotentHint": True},
            "inputSchema": schema(
                "resource_id", "name",
                resource_id={"type": "integer", "description": "Id of the resource"},
                name={"type": "string", "description": "New display name"},
                owner={"type": "string", "description": "Owner user name"},
                state={"type": "integer", "description": "State: 0-draft,1-active,2-retired"},
                labels={"type": "array", "items": {"type": "string"},
                        "description": "Free-form labels"},
                id={"type": "integer", "description": "Record id (system-managed)"},
                update_time={"type": "string", "description": "Last update time"},
                update_admin={"type": "string", "description": "Last editor"})}


def tokens(text: str) -> int:
    return len(text) // 4


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tools", type=int, default=300)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    tools = [realistic_tool(i) for i in range(args.tools)]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        box = Toolbox(root)
        box.add("bench", tools, page_size=50)
        canal = Canal(workflows=ROOT / "workflows", home=root / ".canal",
                      mcp_config=root / ".mcp.json", checkpointer="memory:")
        first, again = [], []
        for _ in range(args.runs):
            (root / ".canal").exists() and __import__("shutil").rmtree(root / ".canal")
            t = time.perf_counter()
            summary = canal.discover()
            first.append(time.perf_counter() - t)
            assert summary["added_count"] == args.tools, summary
            t = time.perf_counter()
            assert canal.discover()["changed_count"] == 0
            again.append(time.perf_counter() - t)
        cold, warm = [], []
        for i in range(args.runs):
            _RANKINGS.clear()  # as a new process finds it
            t = time.perf_counter()
            canal.search(f"change the owner of resource {i}")
            cold.append(time.perf_counter() - t)
            t = time.perf_counter()
            canal.search(f"update the labels of resource family {i + 1}")
            warm.append(time.perf_counter() - t)
        index = json.dumps(canal.index())
        found = json.dumps(canal.search("update resource family 7 owner"))
        meta = json.dumps(canal.meta("resource_007_update"))
        step = json.dumps(canal.start("create-permission-set").to_json())
        everything = json.dumps([{"name": t["name"], "description": t["description"],
                                  "inputSchema": t["inputSchema"]} for t in tools])
    # above 50 tools the index sums them up, and the agent searches for its task
    ours = tokens(index) + (tokens(found) if args.tools > 50 else 0) + tokens(meta) \
        + tokens(step)
    print("| measure | value |")
    print("|---|---|")
    print(f"| `discover`, {args.tools} tools, empty cache (median of {args.runs}) | "
          f"{statistics.median(first) * 1000:.0f} ms |")
    print(f"| `discover` again, nothing changed | {statistics.median(again) * 1000:.0f} ms |")
    print(f"| `search`, {args.tools} tools, first in a process (median of {args.runs}) | "
          f"{statistics.median(cold) * 1000:.0f} ms |")
    print(f"| `search` again in the same process | {statistics.median(warm) * 1000:.0f} ms |")
    print(f"| context: index + one `search` (above 50 tools) + one `meta` + one step | "
          f"~{ours:,} tokens |")
    print(f"| context: every tool schema injected | ~{tokens(everything):,} tokens |")
    print(f"| of which the index alone | ~{tokens(index):,} tokens |")


if __name__ == "__main__":
    main()
