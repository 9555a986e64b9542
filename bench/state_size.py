"""State size: the bytes one run leaves in the checkpointer, as a failing step is retried.

A run of the seeds' project workflow whose ``create_role`` step fails every time is
answered ``retry`` N times (as a scripted agent would), then aborted. Printed: the SQLite
file's size and the bytes of the run's checkpoints and writes, at each N, so growth per
retry can be read off (constant per retry is linear growth; growing per retry is
quadratic).

Usage: ``.venv/bin/python bench/state_size.py [--retries 50 100 200]``. Prints a Markdown
table.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from canal import Canal  # noqa: E402
from tests.conftest import Recorder, project_steps, write_workflow  # noqa: E402

VALID = {"project_name": "p", "host": "p.example.com"}


def measure(retries: int) -> dict[str, int]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_workflow(root / "workflows", "project", project_steps())
        recorder = Recorder()
        recorder.fail.add("create_role")
        db = root / "state.db"
        with Canal(workflows=root / "workflows", home=root / ".canal",
                   checkpointer=f"sqlite:///{db}", tools=recorder.client()) as canal:
            canal.start("project", thread_id="t")
            canal.advance("t", VALID)
            for _ in range(retries):
                canal.advance("t", {"action": "retry"})
            canal.abort("t")
        with sqlite3.connect(db) as conn:
            checkpoints = conn.execute(
                "SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0), COUNT(*) "
                "FROM checkpoints").fetchone()
            writes = conn.execute("SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes"
                                  ).fetchone()[0]
        return {"retries": retries, "file": db.stat().st_size, "checkpoints": checkpoints[1],
                "checkpoint_bytes": checkpoints[0], "write_bytes": writes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--retries", type=int, nargs="+", default=[50, 100, 200])
    args = parser.parse_args()
    rows = [measure(n) for n in args.retries]
    print("| retries | checkpoints | checkpoint bytes | bytes per checkpoint | write bytes "
          "| state.db bytes |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print(f"| {row['retries']} | {row['checkpoints']} | {row['checkpoint_bytes']:,} "
              f"| {row['checkpoint_bytes'] // row['checkpoints']:,} | {row['write_bytes']:,} "
              f"| {row['file']:,} |")


if __name__ == "__main__":
    main()
