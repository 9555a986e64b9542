"""The default store: one SQLite file holding LangGraph's checkpoints and canal's registry."""

from __future__ import annotations

import fcntl
import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from canal.checkpoints import RunRecord, conflict, seal, unseal
from canal.errors import ConfigError

_TABLES = (
    """CREATE TABLE IF NOT EXISTS canal_runs (
        thread_id TEXT PRIMARY KEY, workflow TEXT NOT NULL, created_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS canal_definitions (
        digest TEXT PRIMARY KEY, workflow TEXT NOT NULL, files TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS canal_calls (
        thread_id TEXT NOT NULL, key TEXT NOT NULL, step TEXT NOT NULL, digest TEXT NOT NULL,
        outcome TEXT, PRIMARY KEY (thread_id, key))""",
)


class SqliteStore:
    """``SqliteSaver`` over one connection; the file is created on the first write only."""

    def __init__(self, path: str | Path, sealer: Any = None) -> None:
        self.path = Path(path)
        self.sealer = sealer
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

            self._saver = SqliteSaver(self._connect(create=True),
                                      serde=self.sealer.serde() if self.sealer else None)
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

    def call_started(self, thread_id: str, key: str, step: str, digest: str) -> None:
        conn = self._connect(create=True)
        assert conn is not None
        with conn:
            conn.execute("INSERT OR IGNORE INTO canal_calls VALUES (?, ?, ?, ?, NULL)",
                         (thread_id, key, step, digest))

    def call_finished(self, thread_id: str, key: str, outcome: dict[str, Any]) -> None:
        conn = self._connect(create=True)
        assert conn is not None
        with conn:
            conn.execute("UPDATE canal_calls SET outcome = ? WHERE thread_id = ? AND key = ?",
                         (seal(self.sealer, outcome), thread_id, key))

    def call_record(self, thread_id: str, key: str) -> dict[str, Any] | None:
        conn = self._connect(create=False)
        row = conn.execute(
            "SELECT step, digest, outcome FROM canal_calls WHERE thread_id = ? AND key = ?",
            (thread_id, key)).fetchone() if conn else None
        if row is None:
            return None
        return {"step": row[0], "digest": row[1],
                "outcome": unseal(self.sealer, row[2]) if row[2] is not None else None}

    def forget(self, thread_id: str) -> int:
        saver = self.saver()
        count = sum(1 for _ in saver.list({"configurable": {"thread_id": thread_id}}))
        saver.delete_thread(thread_id)
        conn = self._connect(create=True)
        assert conn is not None
        with conn:
            conn.execute("DELETE FROM canal_runs WHERE thread_id = ?", (thread_id,))
            conn.execute("DELETE FROM canal_calls WHERE thread_id = ?", (thread_id,))
        (self.path.with_name(self.path.name + ".locks") / thread_id).unlink(missing_ok=True)
        return count

    def drop_definitions(self, keep: set[str]) -> int:
        conn = self._connect(create=False)
        if conn is None:
            return 0
        stale = [d for (d,) in conn.execute("SELECT digest FROM canal_definitions")
                 if d not in keep]
        with conn:
            conn.executemany("DELETE FROM canal_definitions WHERE digest = ?",
                             [(d,) for d in stale])
        return len(stale)

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
