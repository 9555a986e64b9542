"""Throughput of several worker processes serving the same runs on one PostgreSQL database.

A starter process starts the runs of a workflow with a gate, two chained in-process tools
and a notification (two advances a run), then W worker processes (W = 1, 2, 4) finish
them: "split", each worker owns a slice, as behind a queue; "shared", every worker races
over every run (every advance names the step it read, so stale or conflicting attempts
change nothing). Times include each worker's start-up. Each measure uses a fresh schema,
dropped afterwards.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.rows import row
from tests.conftest import POSTGRES_URL, TOOLS_MODULE, project_steps, write_workflow

ROOT = Path(__file__).resolve().parent.parent
WORKER = (ROOT / "tests" / "cli" / "test_workers.py").read_text().split("WORKER = r'''")[1] \
    .split("'''")[0]
STARTER = ("import json, sys\nfrom canal import Canal\n"
           "c = Canal(checkpointer=sys.argv[1])\n"
           "print(json.dumps([c.start('create-project').thread_id "
           "for _ in range(int(sys.argv[2]))]))")


@contextmanager
def project() -> Iterator[tuple[Path, dict[str, str]]]:
    """A temporary project folder (the ``create-project`` workflow, its Python tools in
    ``canal.yaml``) and the environment its processes run in."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_workflow(root / "workflows", "create-project", project_steps())
        (root / "project_tools.py").write_text(TOOLS_MODULE)
        (root / "canal.yaml").write_text(
            "python_tools:\n  create_project: project_tools:create_project\n"
            "  create_role: project_tools:create_role\n")
        yield root, {"PYTHONPATH": f"{root}:{ROOT}",
                     "PATH": os.environ.get("PATH", "/usr/bin:/bin")}


@contextmanager
def postgres_schema(url: str) -> Iterator[str]:
    """A fresh schema on ``url``, as a checkpointer URL; dropped on the way out."""
    import psycopg

    schema = f"canal_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
    try:
        yield f"{url}?options=-csearch_path%3D{schema}"
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def runs_per_second(workers: int, runs: int, shared: bool = False,
                    url: str = POSTGRES_URL) -> float:
    """Runs finished per second by ``workers`` processes, start-up included."""
    with project() as (root, env), postgres_schema(url) as db:
        threads = json.loads(subprocess.run(
            [sys.executable, "-c", STARTER, db, str(runs)], cwd=root, env=env,
            capture_output=True, text=True, check=True).stdout)
        shares = [threads] * workers if shared else [threads[i::workers] for i in range(workers)]
        began = time.perf_counter()
        procs = [subprocess.Popen([sys.executable, "-c", WORKER, db, json.dumps(share)],
                                  cwd=root, env=env, stdout=subprocess.PIPE, text=True)
                 for share in shares]
        for proc in procs:
            out, _ = proc.communicate(timeout=300)
            if proc.returncode or json.loads(out)["left"]:
                raise RuntimeError(f"a worker left runs unfinished: {out}")
        return runs / (time.perf_counter() - began)


def throughput_rows(runs: int, shared: bool) -> list[dict[str, Any]]:
    """``pg_throughput_<W>`` (split) for W = 1, 2, 4 and ``pg_scaling``; with ``shared``,
    ``pg_throughput_<W>_shared`` too."""
    cores, load = os.cpu_count(), os.getloadavg()[0]
    how = (f"{runs} runs (gate, 2 chained Python tools, notification: 2 advances each) on "
           "one PostgreSQL database, each worker a new process owning a slice; worker "
           f"start-up included (one worker alone starts and finishes one run in "
           f"{1 / runs_per_second(1, 1):.1f} s); "
           f"load average {load:.1f} at the start")
    rates = {w: runs_per_second(w, runs) for w in (1, 2, 4)}
    rows = [row(f"pg_throughput_{w}", rate, None, "runs/s", None,
                f"{w} worker(s): {how}; {cores} cores") for w, rate in rates.items()]
    rows.append(row("pg_scaling", rates[2], rates[1], "runs/s", None,
                    f"ratio: throughput with 2 workers / with 1 (4 / 1: "
                    f"{rates[4] / rates[1]:.2f}); os.cpu_count() = {cores}, so more "
                    "workers than cores cannot add CPU-bound throughput"))
    if shared:
        for w in (2, 4):
            rate = runs_per_second(w, runs, shared=True)
            rows.append(row(f"pg_throughput_{w}_shared", rate, rates[w], "runs/s", None,
                            f"{w} workers all racing over every run (baseline: the same "
                            f"workers each owning a slice); {runs} runs; {cores} cores"))
    return rows


def measure(quick: bool) -> list[dict[str, Any]]:
    return throughput_rows(40 if quick else 100, shared=not quick)
