"""PostgreSQL store: ``PostgresSaver`` and the registry table in the same database.

Connections use ``autocommit=True`` and ``prepare_threshold=0`` as the saver requires; its
tables and canal's are created on first use.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Any, Iterator

from canal.checkpoints import RunRecord, conflict
from canal.errors import ConfigError

_TABLES = (
    """CREATE TABLE IF NOT EXISTS canal_runs (
        thread_id TEXT PRIMARY KEY, workflow TEXT NOT NULL, created_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS canal_definitions (
        digest TEXT PRIMARY KEY, workflow TEXT NOT NULL, files JSONB NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS canal_calls (
        thread_id TEXT NOT NULL, key TEXT NOT NULL, step TEXT NOT NULL, digest TEXT NOT NULL,
        outcome JSONB, PRIMARY KEY (thread_id, key))""",
)


class PostgresStore:
    def __init__(self, url: str) -> None:
        self.url = url
        self._conn: Any = None
        self._saver: Any = None
        self._held: set[str] = set()

    def _connect(self) -> Any:
        if self._conn is None:
            try:
                import psycopg
            except ImportError as exc:
                raise ConfigError("PostgreSQL needs the extra: pip install 'canal[postgres]'") from exc
            try:
                self._conn = psycopg.connect(self.url, autocommit=True, prepare_threshold=0)
                for table in _TABLES:
                    self._conn.execute(table)
            except psycopg.Error as exc:
                raise ConfigError(f"cannot connect to PostgreSQL: {exc}") from exc
        return self._conn

    def saver(self) -> Any:
        if self._saver is None:
            from langgraph.checkpoint.postgres import PostgresSaver
            from psycopg.rows import dict_row

            conn = self._connect()
            conn.row_factory = dict_row
            self._saver = PostgresSaver(conn)
            self._saver.setup()
        return self._saver

    def register(self, thread_id: str, workflow: str, created_at: str) -> bool:
        cursor = self._connect().execute(
            "INSERT INTO canal_runs VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
            (thread_id, workflow, created_at),
        )
        return cursor.rowcount == 1

    def lookup(self, thread_id: str) -> RunRecord | None:
        row = self._connect().cursor().execute(
            "SELECT thread_id, workflow, created_at FROM canal_runs WHERE thread_id = %s",
            (thread_id,),
        ).fetchone()
        return _record(row) if row else None

    def records(self) -> list[RunRecord]:
        rows = self._connect().cursor().execute(
            "SELECT thread_id, workflow, created_at FROM canal_runs ORDER BY created_at, thread_id"
        ).fetchall()
        return [_record(row) for row in rows]

    def save_definition(self, digest: str, workflow: str, files: dict[str, str]) -> None:
        self._connect().execute(
            "INSERT INTO canal_definitions VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
            (digest, workflow, json.dumps(files)))

    def definition(self, digest: str) -> dict[str, str] | None:
        row = self._connect().cursor().execute(
            "SELECT files FROM canal_definitions WHERE digest = %s", (digest,)).fetchone()
        if row is None:
            return None
        files = row["files"] if isinstance(row, dict) else row[0]
        return json.loads(files) if isinstance(files, str) else files

    def call_started(self, thread_id: str, key: str, step: str, digest: str) -> None:
        self._connect().execute(
            "INSERT INTO canal_calls VALUES (%s, %s, %s, %s, NULL) ON CONFLICT DO NOTHING",
            (thread_id, key, step, digest))

    def call_finished(self, thread_id: str, key: str, outcome: dict[str, Any]) -> None:
        self._connect().execute(
            "UPDATE canal_calls SET outcome = %s WHERE thread_id = %s AND key = %s",
            (json.dumps(outcome), thread_id, key))

    def call_record(self, thread_id: str, key: str) -> dict[str, Any] | None:
        row = self._connect().cursor().execute(
            "SELECT step, digest, outcome FROM canal_calls WHERE thread_id = %s AND key = %s",
            (thread_id, key)).fetchone()
        if row is None:
            return None
        step, digest, outcome = (row["step"], row["digest"], row["outcome"]) \
            if isinstance(row, dict) else row
        if isinstance(outcome, str):
            outcome = json.loads(outcome)
        return {"step": step, "digest": digest, "outcome": outcome}

    def forget(self, thread_id: str) -> int:
        saver = self.saver()
        count = sum(1 for _ in saver.list({"configurable": {"thread_id": thread_id}}))
        saver.delete_thread(thread_id)
        conn = self._connect()
        conn.execute("DELETE FROM canal_runs WHERE thread_id = %s", (thread_id,))
        conn.execute("DELETE FROM canal_calls WHERE thread_id = %s", (thread_id,))
        return count

    def drop_definitions(self, keep: set[str]) -> int:
        rows = self._connect().cursor().execute("SELECT digest FROM canal_definitions").fetchall()
        stale = [r["digest"] if isinstance(r, dict) else r[0] for r in rows]
        stale = [d for d in stale if d not in keep]
        for digest in stale:
            self._connect().execute("DELETE FROM canal_definitions WHERE digest = %s", (digest,))
        return len(stale)

    @contextmanager
    def lock(self, thread_id: str) -> Iterator[None]:
        """A session advisory lock keyed by the thread id: one writer per run across every
        worker and machine using this database."""
        conn = self._connect()
        if thread_id in self._held:  # advisory locks nest within a session; canal's do not
            raise conflict(thread_id)
        row = conn.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0)) AS ok",
                           (f"canal:{thread_id}",)).fetchone()
        if not (row["ok"] if isinstance(row, dict) else row[0]):
            raise conflict(thread_id)
        self._held.add(thread_id)
        try:
            yield
        finally:
            self._held.discard(thread_id)
            conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))",
                         (f"canal:{thread_id}",))

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = self._saver = None


def _record(row: Any) -> RunRecord:
    if isinstance(row, dict):
        return RunRecord(row["thread_id"], row["workflow"], row["created_at"])
    return RunRecord(*row)
