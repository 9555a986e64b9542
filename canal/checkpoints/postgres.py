"""PostgreSQL store: ``PostgresSaver`` and canal's tables in one database, over a pool.

Many worker processes, on many machines, can serve the same runs: every table is shared and
the per-run lock is a session advisory lock, held on a connection taken from the pool for
the length of the operation (and released by the server if the process dies). Connections
use ``autocommit=True``, ``prepare_threshold=0`` and dict rows, as the saver requires;
tables are created on first use. ``?pool_size=N`` in the URL sets the pool's size
(default 4, at least 2: a run's lock keeps one connection for the whole operation while the
saver and the journal write on another, so one connection would wait for itself);
``connect_timeout`` (whole seconds) also bounds how long canal waits for the pool (default
10 s, also for 0 or less, which libpq reads as "for ever"); the other query parameters go
to libpq.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from canal.checkpoints.contract import conflict
from canal.checkpoints.heads import PostgresHeads
from canal.checkpoints.store import CanalStore
from canal.checkpoints.tables import POSTGRES, Tables
from canal.errors import ConfigError

WAIT = 10.0  # seconds to wait for a connection when the URL sets no connect_timeout
MIN_POOL = 2  # the run lock's connection, and one to write with while it is held


def _number(query: list[tuple[str, str]], name: str, default: int) -> int:
    values = [v for k, v in query if k == name]
    try:
        return int(values[-1]) if values else default
    except ValueError as exc:
        raise ConfigError(f"{name} in the PostgreSQL URL must be a whole number") from exc


def parse_url(url: str) -> tuple[str, int, float]:
    """``(libpq URL, pool size, wait in seconds)`` of a canal PostgreSQL URL."""
    parts = urlsplit(url)
    query = parse_qsl(parts.query)
    size = _number(query, "pool_size", 4)
    if not MIN_POOL <= size <= 100:
        raise ConfigError(f"pool_size in the PostgreSQL URL must be from {MIN_POOL} to 100: a "
                          "run's writer lock holds one connection while its checkpoints and "
                          "journal use another")
    timeout = _number(query, "connect_timeout", 0)  # libpq: 0 or less waits for ever
    rest = urlencode([(k, v) for k, v in query if k != "pool_size"])
    return urlunsplit(parts._replace(query=rest)), size, float(timeout) if timeout > 0 else WAIT


class PostgresDatabase:
    """A connection pool, opened (with canal's tables made) on first use."""

    def __init__(self, url: str) -> None:
        self.url, self.pool_size, self.wait = parse_url(url)
        self._pool: Any = None
        self.schema = "public"

    def pool(self) -> Any:
        if self._pool is None:
            try:
                import psycopg
                from psycopg.rows import dict_row
                from psycopg_pool import ConnectionPool, PoolTimeout
            except ImportError as exc:
                raise ConfigError(
                    "PostgreSQL needs the extra: pip install 'canal[postgres]'") from exc
            pool = ConnectionPool(self.url, min_size=1, max_size=self.pool_size, open=False,
                                  timeout=self.wait,
                                  kwargs={"autocommit": True, "prepare_threshold": 0,
                                          "row_factory": dict_row})
            try:
                pool.open(wait=True, timeout=self.wait)
                with pool.connection() as conn:
                    for table in POSTGRES.tables():
                        conn.execute(table)
            except (PoolTimeout, psycopg.Error) as exc:
                pool.close()
                raise ConfigError(f"cannot connect to PostgreSQL: {exc}") from exc
            self._pool = pool
            self.schema = self.execute("SELECT current_schema()")[0][0][0]
        return self._pool

    @contextmanager
    def connection(self) -> Iterator[Any]:
        """A connection from the pool; none free within the wait is a ConfigError."""
        from psycopg_pool import PoolTimeout

        pool = self.pool()
        try:
            conn = pool.getconn()
        except PoolTimeout as exc:
            raise ConfigError(
                f"no PostgreSQL connection was free within {self.wait:g} s (pool_size="
                f"{self.pool_size}); raise pool_size or connect_timeout in the URL") from exc
        try:
            yield conn
        finally:
            pool.putconn(conn)

    def execute(self, sql: str, params: Sequence[Any] = (),
                write: bool = False) -> tuple[list[tuple[Any, ...]], int]:
        from psycopg.rows import tuple_row

        with self.connection() as conn, conn.cursor(row_factory=tuple_row) as cursor:
            cursor.execute(sql, params)
            return (cursor.fetchall() if cursor.description else []), cursor.rowcount

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()
            self._pool = None


class AdvisoryLocks:
    """A session advisory lock keyed by the schema and thread id, on a connection kept out
    of the pool until the block ends: one writer per run across every worker and machine.
    Advisory locks are database-wide, so a run in another schema has its own key (in
    ``public`` the key is the one earlier versions used)."""

    def __init__(self, db: PostgresDatabase) -> None:
        self.db = db
        self._held: set[str] = set()

    @contextmanager
    def lock(self, thread_id: str) -> Iterator[None]:
        if thread_id in self._held:  # advisory locks nest within a session; canal's do not
            raise conflict(thread_id)
        self.db.pool()  # opened first: the key needs the schema
        schema = "" if self.db.schema == "public" else f"{self.db.schema}:"
        key = f"canal:{schema}{thread_id}"
        with self.db.connection() as conn:
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

    def forget(self, thread_id: str) -> None:
        """Nothing stays behind: the server drops an advisory lock when it is released."""


def postgres_store(url: str, sealer: Any = None) -> CanalStore:
    db = PostgresDatabase(url)

    def saver() -> Any:
        from langgraph.checkpoint.postgres import PostgresSaver

        from canal.checkpoints.threaded import threaded

        made = threaded(PostgresSaver)(db.pool(), serde=sealer.serde() if sealer else None)
        made.setup()
        return made

    return CanalStore(Tables(db, POSTGRES, sealer), saver, AdvisoryLocks(db),
                      PostgresHeads(db, sealer))
