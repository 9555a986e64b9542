"""Throughput of several worker processes serving the same runs on one PostgreSQL database.

Starts RUNS runs of a workflow with a gate and two chained (in-process) tools, then lets W
worker processes (W = 1, 2, 4) finish them: "shared", every worker races over every run
(every advance names the step it read, so stale or conflicting attempts change nothing);
"split", each worker owns a slice, as behind a queue. Times include each worker's start-up.

Usage: ``.venv/bin/python bench/workers.py [--runs N] [--url postgresql://...]``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import TOOLS_MODULE, project_steps, write_workflow  # noqa: E402

WORKER = (ROOT / "tests" / "cli" / "test_workers.py").read_text().split("WORKER = r'''")[1] \
    .split("'''")[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--url", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    import psycopg

    print("| workers | runs | mode | seconds | runs/s |")
    print("|---|---|---|---|---|")
    for workers, mode in ((1, "-"), (2, "shared"), (2, "split"), (4, "shared"), (4, "split")):
        schema = f"canal_bench_{uuid.uuid4().hex[:8]}"
        with psycopg.connect(args.url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        url = f"{args.url}?options=-csearch_path%3D{schema}"
        try:
            with tempfile.TemporaryDirectory() as tmp:
                root = Path(tmp)
                write_workflow(root / "workflows", "create-project", project_steps())
                (root / "project_tools.py").write_text(TOOLS_MODULE)
                (root / "canal.yaml").write_text(
                    "python_tools:\n  create_project: project_tools:create_project\n"
                    "  create_role: project_tools:create_role\n")
                env = {"PYTHONPATH": f"{root}:{ROOT}", "PATH": "/usr/bin:/bin"}
                starter = ("import json, sys\nfrom canal import Canal\n"
                           "c = Canal(checkpointer=sys.argv[1])\n"
                           "print(json.dumps([c.start('create-project').thread_id "
                           "for _ in range(int(sys.argv[2]))]))")
                threads = json.loads(subprocess.run(
                    [sys.executable, "-c", starter, url, str(args.runs)], cwd=root, env=env,
                    capture_output=True, text=True, check=True).stdout)
                shares = ([threads] * workers if mode != "split"
                          else [threads[i::workers] for i in range(workers)])
                began = time.perf_counter()
                procs = [subprocess.Popen([sys.executable, "-c", WORKER, url, json.dumps(share)],
                                          cwd=root, env=env, stdout=subprocess.PIPE, text=True)
                         for share in shares]
                for proc in procs:
                    out, _ = proc.communicate()
                    assert json.loads(out)["left"] == []
                elapsed = time.perf_counter() - began
        finally:
            with psycopg.connect(args.url, autocommit=True) as conn:
                conn.execute(f"DROP SCHEMA {schema} CASCADE")
        print(f"| {workers} | {args.runs} | {mode} | {elapsed:.1f} | "
              f"{args.runs / elapsed:.1f} |")


if __name__ == "__main__":
    main()
