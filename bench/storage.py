"""Storage: the bytes runs leave in a SQLite checkpointer, before and after ``prune``, and
as a failing step is retried.

Stored bytes are the sum of the byte lengths of every value in every table of the database
(LangGraph's checkpoints and writes, canal's run registry, pinned definitions and call
journal); the file's size (with its write-ahead log) is given beside them (SQLite keeps
freed pages until a VACUUM).
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bench.rows import row
from canal import Canal
from tests.conftest import Recorder, project_steps, write_workflow

VALID = {"project_name": "p", "host": "p.example.com"}


def file_bytes(db: Path) -> int:
    """The database file's size with its write-ahead log's."""
    wal = db.with_name(db.name + "-wal")
    return db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)


def stored_bytes(db: Path) -> int:
    """The byte lengths of every value in every table of the SQLite database ``db``."""
    with sqlite3.connect(db) as conn:
        tables = [name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")]
        total = 0
        for table in tables:
            columns = [c[1] for c in conn.execute(f'PRAGMA table_info("{table}")')]
            sums = ", ".join(f'COALESCE(SUM(LENGTH(CAST("{c}" AS BLOB))), 0)' for c in columns)
            total += sum(conn.execute(f'SELECT {sums} FROM "{table}"').fetchone())
    conn.close()
    return total


@contextmanager
def project_canal(recorder: Recorder) -> Iterator[tuple[Canal, Path]]:
    """A Canal over a temporary project workflow on SQLite, and its database file."""
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_workflow(root / "workflows", "project", project_steps())
        db = root / "state.db"
        with Canal(workflows=root / "workflows", home=root / ".canal",
                   checkpointer=f"sqlite:///{db}", tools=recorder.client()) as canal:
            yield canal, db


def prune_figures(runs: int) -> dict[str, int]:
    """Stored bytes and file size after ``runs`` completed runs, and after pruning them."""
    with project_canal(Recorder()) as (canal, db):
        for i in range(runs):
            thread = canal.start("project", thread_id=f"t{i}").thread_id
            canal.advance(thread, VALID)
            assert canal.advance(thread, {}).status == "completed"
        before, file_before = stored_bytes(db), file_bytes(db)
        pruned = canal.prune(timedelta(0), now=datetime.now(UTC) + timedelta(seconds=1))
        assert pruned["count"] == runs, pruned
        return {"before": before, "after": stored_bytes(db), "file_before": file_before,
                "file_after": file_bytes(db)}


def retry_figures(retries: int) -> dict[str, int]:
    """What one run whose ``create_role`` fails leaves after ``retries`` retries and an
    abort: its checkpoints, their bytes (checkpoint and metadata), its writes' bytes, and
    the file's size."""
    recorder = Recorder()
    recorder.fail.add("create_role")
    with project_canal(recorder) as (canal, db):
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
        conn.close()
        return {"checkpoints": checkpoints[1], "checkpoint_bytes": checkpoints[0],
                "write_bytes": writes, "file": file_bytes(db)}


def prune_rows(runs: int) -> list[dict[str, Any]]:
    """``checkpoint_bytes``: stored bytes a completed run, after ``Canal.prune`` against
    before."""
    f = prune_figures(runs)
    return [row("checkpoint_bytes", f["after"] / runs, f["before"] / runs, "bytes/run", None,
                f"{runs} completed runs (gate, 2 chained tools, notification) on SQLite, "
                "then Canal.prune(older_than=0); sum of every value's length in every "
                f"table: {f['before']:,} B before, {f['after']:,} B after; file and WAL "
                f"{f['file_before']:,} B before, {f['file_after']:,} B after (no VACUUM)")]


def retry_rows(counts: tuple[int, ...]) -> list[dict[str, Any]]:
    """``retry_bytes_<N>`` for each retry count, and ``retry_bytes_per_retry``: the growth
    a retry over the last interval against the first (ratio 1: linear growth)."""
    figures = {n: retry_figures(n) for n in counts}
    total = {n: f["checkpoint_bytes"] + f["write_bytes"] for n, f in figures.items()}
    rows = [row(f"retry_bytes_{n}", total[n], None, "bytes", None,
                f"one run whose create_role fails, retried {n} times then aborted: "
                f"{f['checkpoints']} checkpoints, {f['checkpoint_bytes']:,} B of checkpoints "
                f"and metadata, {f['write_bytes']:,} B of writes; SQLite file and WAL "
                f"{f['file']:,} B")
            for n, f in figures.items()]
    (a, b), (c, d) = counts[:2], counts[-2:]
    rows.append(row("retry_bytes_per_retry", (total[d] - total[c]) / (d - c),
                    (total[b] - total[a]) / (b - a), "bytes/retry", None,
                    f"stored bytes a retry adds between {c} and {d} retries, against between "
                    f"{a} and {b} (ratio about 1: linear growth; above: growing per retry)"))
    return rows


def measure(quick: bool) -> list[dict[str, Any]]:
    return prune_rows(30 if quick else 200) + retry_rows((10, 20, 40) if quick
                                                         else (50, 100, 200))
