"""Memory of a long-lived worker: one process completing many runs on SQLite, its peak RSS
after the first hundred runs against after the last.

The worker (``python -m bench.memory RUNS``, in a project folder) starts and finishes run
after run of a workflow with a gate, two chained in-process tools and a notification, and
prints its ``VmHWM`` (peak RSS) and ``VmRSS`` from ``/proc/self/status`` after run 100 and
after the last. With ``BENCH_TRACEMALLOC=1`` it also traces allocations from run 100 on and
prints the largest growths between then and the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from typing import Any

from bench.rows import row
from bench.throughput import project

FIRST = 100
VALID = {"project_name": "p", "host": "p.example.com"}


def status_mb() -> dict[str, float]:
    """This process's peak and current resident set, in MB."""
    with open("/proc/self/status") as status:
        fields = dict(line.split(":", 1) for line in status.read().splitlines())
    return {key: int(fields[key].split()[0]) / 1024 for key in ("VmHWM", "VmRSS")}


def worker(runs: int, trace: bool) -> dict[str, Any]:
    """Complete ``runs`` runs in this process; memory after the first ``FIRST`` and the
    last (and, when ``trace``, the top allocation growths between the two)."""
    from canal import Canal

    canal = Canal(checkpointer="sqlite:///state.db")
    report: dict[str, Any] = {}
    snapshot = None
    for i in range(runs):
        thread = canal.start("create-project").thread_id
        canal.advance(thread, VALID)
        if canal.advance(thread, {}).status != "completed":
            raise RuntimeError(f"run {thread} did not complete")
        if i + 1 == FIRST:
            report["first"] = status_mb()
            if trace:
                tracemalloc.start(10)
                snapshot = tracemalloc.take_snapshot()
    report["last"] = status_mb()
    if snapshot is not None:
        diff = tracemalloc.take_snapshot().compare_to(snapshot, "traceback")
        report["growth"] = [f"{stat.size_diff / 1024:+.0f} KiB in {stat.count_diff:+d} "
                            f"blocks: {' <- '.join(str(f) for f in stat.traceback[:4])}"
                            for stat in diff[:8]]
    canal.close()
    return report


def rss_figures(runs: int, trace: bool = False) -> dict[str, Any]:
    """Run the worker as a new process over ``runs`` runs; its report."""
    with project() as (root, env):
        env = {**env, **({"BENCH_TRACEMALLOC": "1"} if trace else {})}
        out = subprocess.run([sys.executable, "-m", "bench.memory", str(runs)], cwd=root,
                             env=env, capture_output=True, text=True, timeout=900)
        if out.returncode:
            raise RuntimeError(f"the worker failed: {out.stderr[-2000:]}")
        report: dict[str, Any] = json.loads(out.stdout)
        return report


def rss_rows(runs: int, quick_note: str = "") -> list[dict[str, Any]]:
    """``peak_rss_mb``: peak RSS after the last run against after run ``FIRST``."""
    report = rss_figures(runs)
    first, last = report["first"], report["last"]
    return [row("peak_rss_mb", last["VmHWM"], first["VmHWM"], "MB", "ratio <= 1.1",
                f"one worker process completing {runs} runs (gate, 2 chained Python tools, "
                f"notification; SQLite){quick_note}: peak RSS (VmHWM) after the last run "
                f"against after run {FIRST}; current RSS {first['VmRSS']:.1f} -> "
                f"{last['VmRSS']:.1f} MB")]


def measure(quick: bool) -> list[dict[str, Any]]:
    return rss_rows(300, " (quick: 300 runs, not 1,000)") if quick else rss_rows(1000)


if __name__ == "__main__":
    print(json.dumps(worker(int(sys.argv[1]), bool(os.environ.get("BENCH_TRACEMALLOC")))))
