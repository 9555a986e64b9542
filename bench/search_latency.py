"""Search latency: ``Canal.search`` in-process over 1,000 generated tools (``bench.tools``),
cache discovered beforehand; the median over a set of agent-like queries.

Usage: ``python -m bench.search_latency [--quick]`` from the repository root; prints JSON
lines.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from bench.rows import median_ms, row, run_alone

NAMES = ("search_ms",)
TARGET = "<= 100 ms"
QUERIES = ("create a role in a project", "disable an api key", "export invoices as csv",
           "who owns this dashboard", "delete a dns record", "archive old backups",
           "list alert rules by severity", "change the owner of a cluster")


def measure(quick: bool) -> list[dict[str, Any]]:
    from bench.tools import realistic_tools
    from canal import Canal
    from tests.conftest import Toolbox

    rounds = 3 if quick else 10
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        Toolbox(root).add("bench", realistic_tools(1000), page_size=100)
        with Canal(workflows=root / "workflows", home=root / ".canal", checkpointer="memory:",
                   mcp_config=root / ".mcp.json") as canal:
            canal.discover()
            canal.search(QUERIES[0])  # a first call may build what later calls reuse
            samples = []
            for _ in range(rounds):
                for query in QUERIES:
                    began = time.perf_counter()
                    canal.search(query, limit=5)
                    samples.append(time.perf_counter() - began)
    return [row("search_ms", median_ms(samples), None, "ms", TARGET,
                f"`Canal.search(query, limit=5)` in-process over 1,000 generated tools, "
                f"median of {len(samples)} ({len(QUERIES)} queries x {rounds})")]


if __name__ == "__main__":
    run_alone(measure)
