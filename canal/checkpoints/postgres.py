"""PostgreSQL store: ``PostgresSaver`` and canal's tables in one database, over a pool.

Many worker processes, on many machines, can serve the same runs: every table is shared and
the per-run lock is a session advisory lock, held on a connection taken from the pool for
the length of the operation (and released by the server if the process dies). Connections
use ``autocommit=True``, ``prepare_threshold=0`` and dict rows, as the saver requires;
tables are created on first use. ``?pool_size=N`` in the URL sets the pool's size
(default 4); the other query parameters go to libpq.
"""

from __future__ import annotations

import json
from contextlib import contextmanager
from typing import Any, Iterator
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from canal.checkpoints import RunRecord, conflict, seal, unseal
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


def _split_pool_size(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    query = parse_qsl(parts.query)
    sizes = [v for k, v in query if k == "pool_size"]
    rest = urlencode([(k, v) for k, v in query if k != "pool_size"])
    try:
        size = int(sizes[-1]) if sizes else 4
    except ValueError as exc:
        raise ConfigError("pool_size in the PostgreSQL URL must be a whole number") from exc
    if not 1 <= size <= 100:
        raise ConfigError("pool_size in the PostgreSQL URL must be from 1 to 100")
    return urlunsplit(parts._replace(query=rest)), size


class PostgresStore:
    def __init__(self, url: str, sealer: Any = None) -> None:
        self.url, self.pool_size = _split_pool_size(url)
        self.sealer = sealer
        self._pool: Any = None
        self._saver: Any = None
        self._held: set[str] = set()

    def _connections(self) -> Any:
        if self._pool is None:
            try:
                import psycopg
                from psycopg.rows import dict_row
                from psycopg_pool import ConnectionPool, PoolTimeout
            except ImportError as exc:
                raise ConfigError("PostgreSQL needs the extra: pip install 'canal[postgres]'") from exc
            pool = ConnectionPool(self.url, min_size=1, max_size=self.pool_size, open=False,
                                  kwargs={"autocommit": True, "prepare_threshold": 0,
                                          "row_factory": dict_row})
            try:
                pool.open(wait=True, timeout=10)
                with pool.connection() as conn:
                    for table in _TABLES:
                        conn.execute(table)
            except (PoolTimeout, psycopg.Error) as exc:
                pool.close()
                raise ConfigError(f"cannot connect to PostgreSQL: {exc}") from exc
            self._pool = pool
        return self._pool

    def _execute(self, sql: str, params: tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        with self._connections().connection() as conn:
            cursor = conn.execute(sql, params)
            return cursor.fetchall() if cursor.description else [{"rowcount": cursor.rowcount}]

    def saver(self) -> Any:
        if self._saver is None:
            from langgraph.checkpoint.postgres import PostgresSaver

            self._saver = PostgresSaver(self._connections(),
                                        serde=self.sealer.serde() if self.sealer else None)
            self._saver.setup()
        return self._saver

    def register(self, thread_id: str, workflow: str, created_at: str) -> bool:
        done = self._execute("INSERT INTO canal_runs VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                             (thread_id, workflow, created_at))
        return done[0]["rowcount"] == 1

    def lookup(self, thread_id: str) -> RunRecord | None:
        rows = self._execute("SELECT thread_id, workflow, created_at FROM canal_runs "
                             "WHERE thread_id = %s", (thread_id,))
        return _record(rows[0]) if rows else None

    def records(self) -> list[RunRecord]:
        rows = self._execute("SELECT thread_id, workflow, created_at FROM canal_runs "
                             "ORDER BY created_at, thread_id")
        return [_record(row) for row in rows]

    def save_definition(self, digest: str, workflow: str, files: dict[str, str]) -> None:
        self._execute("INSERT INTO canal_definitions VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                      (digest, workflow, json.dumps(files)))

    def definition(self, digest: str) -> dict[str, str] | None:
        rows = self._execute("SELECT files FROM canal_definitions WHERE digest = %s", (digest,))
        return _json(rows[0]["files"]) if rows else None

    def call_started(self, thread_id: str, key: str, step: str, digest: str) -> None:
        self._execute("INSERT INTO canal_calls VALUES (%s, %s, %s, %s, NULL) "
                      "ON CONFLICT DO NOTHING", (thread_id, key, step, digest))

    def call_finished(self, thread_id: str, key: str, outcome: dict[str, Any]) -> None:
        self._execute("UPDATE canal_calls SET outcome = %s WHERE thread_id = %s AND key = %s",
                      (json.dumps(seal(self.sealer, outcome)), thread_id, key))

    def call_record(self, thread_id: str, key: str) -> dict[str, Any] | None:
        rows = self._execute("SELECT step, digest, outcome FROM canal_calls "
                             "WHERE thread_id = %s AND key = %s", (thread_id, key))
        if not rows:
            return None
        outcome = rows[0]["outcome"]
        return {"step": rows[0]["step"], "digest": rows[0]["digest"],
                "outcome": unseal(self.sealer, outcome) if outcome is not None else None}

    def forget(self, thread_id: str) -> int:
        saver = self.saver()
        count = sum(1 for _ in saver.list({"configurable": {"thread_id": thread_id}}))
        saver.delete_thread(thread_id)
        self._execute("DELETE FROM canal_runs WHERE thread_id = %s", (thread_id,))
        self._execute("DELETE FROM canal_calls WHERE thread_id = %s", (thread_id,))
        return count

    def drop_definitions(self, keep: set[str]) -> int:
        stale = [r["digest"] for r in self._execute("SELECT digest FROM canal_definitions")
                 if r["digest"] not in keep]
        for digest in stale:
            self._execute("DELETE FROM canal_definitions WHERE digest = %s", (digest,))
        return len(stale)

    @contextmanager
    def lock(self, thread_id: str) -> Iterator[None]:
        """A session advisory lock keyed by the thread id, on a connection kept out of the
        pool until the block ends: one writer per run across every worker and machine."""
        if thread_id in self._held:  # advisory locks nest within a session; canal's do not
            raise conflict(thread_id)
        key = f"canal:{thread_id}"
        with self._connections().connection() as conn:
            row = conn.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0)) AS ok",
                               (key,)).fetchone()
            if not row["ok"]:
                raise conflict(thread_id)
            self._held.add(thread_id)
            try:
                yield
            finally:
                self._held.discard(thread_id)
                conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = self._saver = None


def _json(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def _record(row: dict[str, Any]) -> RunRecord:
    return RunRecord(row["thread_id"], row["workflow"], row["created_at"])
