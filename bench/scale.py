"""The scale measures: discover of hundreds of tools, PostgreSQL worker throughput, stored
bytes before and after ``prune`` and as a step is retried, a long-lived worker's memory,
and round trips through ``langgraph dev``.

``python -m bench.scale [--quick]`` (or ``python bench/scale.py``) prints one JSON line a
row. Each part is its own module with its own ``measure(quick)``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench import discover, memory, server, storage, throughput

PARTS = (discover, throughput, storage, memory, server)


def measure(quick: bool) -> list[dict[str, Any]]:
    return [figure for part in PARTS for figure in part.measure(quick)]


if __name__ == "__main__":
    for part in PARTS:  # each part's rows as soon as they are made; its time on stderr
        began = time.perf_counter()
        for figure in part.measure("--quick" in sys.argv[1:]):
            print(json.dumps(figure), flush=True)
        print(f"{part.__name__}: {time.perf_counter() - began:.1f} s", file=sys.stderr)
