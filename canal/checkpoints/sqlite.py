"""The default store: one SQLite file holding LangGraph's checkpoints and canal's registry."""

from __future__ import annotations

import fcntl
import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from canal.checkpoints import RunRecord, conflict
from canal.errors import ConfigError

_TABLES = (
    """CREATE TABLE IF NOT EXISTS canal_runs (
        thread_id TEXT PRIMARY KEY, workflow TEXT NOT NULL, created_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS canal_definitions (
        digest TEXT PRIMARY KEY, workflow TEXT NOT NULL, files TEXT NOT NULL)""",
)


class SqliteStore:
    """``SqliteSaver`` over one connection; the file is created on the first write only."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._conn: sqlite3.Connection | None = None
        self._saver: Any = None

    def _connect(self, create: bool) -> sqlite3.Connection | None:
        if self._conn is None:
            if not create and not self.path.exists():
                return None
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
                conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
                conn.execute("PRAGMA journal_mode=WAL")
                for table in _TABLES:
                    conn.execute(table)
                conn.commit()
            except (OSError, sqlite3.Error) as exc:
                raise ConfigError(f"cannot open the state database {self.path}: {exc}") from exc
            self._conn = conn
        return self._conn

    def saver(self) -> Any:
        if self._saver is None:
            from langgraph.checkpoint.sqlite import SqliteSaver

            self._saver = SqliteSaver(self._connect(create=True))
        return self._saver

    def register(self, thread_id: str, workflow: str, created_at: str) -> bool:
        conn = self._connect(create=True)
        assert conn is not None
        with conn:
            cursor = conn.execute(
                "INSERT OR IGNORE INTO canal_runs VALUES (?, ?, ?)",
                (thread_id, workflow, created_at),
            )
        return cursor.rowcount == 1

    def lookup(self, thread_id: str) -> RunRecord | None:
        conn = self._connect(create=False)
        if conn is None:
            return None
        row = conn.execute("SELECT * FROM canal_runs WHERE thread_id = ?", (thread_id,)).fetchone()
        return RunRecord(*row) if row else None

    def records(self) -> list[RunRecord]:
        conn = self._connect(create=False)
        if conn is None:
            return []
        rows = conn.execute("SELECT * FROM canal_runs ORDER BY created_at, thread_id")
        return [RunRecord(*row) for row in rows]

    def save_definition(self, digest: str, workflow: str, files: dict[str, str]) -> None:
        conn = self._connect(create=True)
        assert conn is not None
        with conn:
            conn.execute("INSERT OR IGNORE INTO canal_definitions VALUES (?, ?, ?)",
                         (digest, workflow, json.dumps(files)))

    def definition(self, digest: str) -> dict[str, str] | None:
        conn = self._connect(create=False)
        if conn is None:
            return None
        row = conn.execute("SELECT files FROM canal_definitions WHERE digest = ?",
                           (digest,)).fetchone()
        return json.loads(row[0]) if row else None

    @contextmanager
    def lock(self, thread_id: str) -> Iterator[None]:
        """An exclusive ``flock`` on ``<db>.locks/<thread>``: one writer per run on this
        machine (an SQLite database is never shared across machines)."""
        folder = self.path.with_name(self.path.name + ".locks")
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(folder / thread_id, "a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise conflict(thread_id) from exc
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = self._saver = None
