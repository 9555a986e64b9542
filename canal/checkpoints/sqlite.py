"""SQLite: the default store (one file holding LangGraph's checkpoints and canal's tables),
and the side file that keeps canal's tables for a saver object passed in."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from canal.checkpoints.heads import SqliteHeads
from canal.checkpoints.locks import FileLocks
from canal.checkpoints.store import CanalStore
from canal.checkpoints.tables import SQLITE, Tables
from canal.errors import ConfigError
from canal.files import private_dir, private_file

SIDE_FILE = "canal.db"


class SqliteDatabase:
    """One ``sqlite3`` connection, shared by threads. With a path, the file (owner-only, in
    an owner-only folder) is made on the first write: a read before that sees an empty database and
    creates nothing. With no path, the database lives in memory as long as this object."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._conn: sqlite3.Connection | None = None
        self.guard = threading.RLock()

    def exists(self) -> bool:
        return self._conn is not None or self.path is None or self.path.exists()

    def connection(self) -> sqlite3.Connection:
        """The connection, opened (and the file made) on first use."""
        with self.guard:
            if self._conn is None:
                self._conn = self._open()
            return self._conn

    def _open(self) -> sqlite3.Connection:
        if self.path is None:
            conn = sqlite3.connect(":memory:", check_same_thread=False)
        else:
            try:
                private_dir(self.path.parent)
                private_file(self.path)  # SQLite gives its -wal and -shm files this mode
                conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
                conn.execute("PRAGMA journal_mode=WAL")
            except (OSError, sqlite3.Error) as exc:
                raise ConfigError(f"cannot open the state database {self.path}: {exc}") from exc
        with conn:
            for table in SQLITE.tables():
                conn.execute(table)
        return conn

    def execute(self, sql: str, params: Sequence[Any] = (),
                write: bool = False) -> tuple[list[tuple[Any, ...]], int]:
        with self.guard:
            if not write and not self.exists():
                return [], 0
            with self.connection() as conn:
                cursor = conn.execute(sql, params)
                return cursor.fetchall(), cursor.rowcount

    def close(self) -> None:
        """Close a file's connection (it reopens on use); memory stays while the object does."""
        with self.guard:
            if self._conn is not None and self.path is not None:
                self._conn.close()
                self._conn = None


def sqlite_store(path: str | Path, sealer: Any = None) -> CanalStore:
    """``SqliteSaver`` and canal's tables over one connection to ``path``."""
    file = Path(path)
    db = SqliteDatabase(file)

    def saver() -> Any:
        from langgraph.checkpoint.sqlite import SqliteSaver

        from canal.checkpoints.threaded import threaded

        saver = threaded(SqliteSaver)(db.connection(),
                                      serde=sealer.serde() if sealer else None)
        # One connection, one lock: LangGraph writes checkpoints from a background thread
        # (durability="async") while a node writes the call journal.
        saver.lock = db.guard  # an RLock: canal's reads re-enter
        return saver

    return CanalStore(Tables(db, SQLITE, sealer), saver, FileLocks(file),
                      SqliteHeads(db, sealer))


def saver_object_store(saver: Any, home: Path, sealer: Any = None) -> CanalStore:
    """A saver object passed in, with canal's tables in ``<home>/canal.db`` beside it: the
    saver keeps only checkpoints (with the serializer it was made with), and what canal
    keeps must outlive the process as the checkpoints may."""
    path = Path(home) / SIDE_FILE
    return CanalStore(Tables(SqliteDatabase(path), SQLITE, sealer), lambda: saver,
                      FileLocks(path))
