"""canal's three tables, once for every SQL backend: the run registry, the pinned
definitions and the call journal, over any database that runs one statement at a time.

The dialects differ only in the placeholder (``?`` for sqlite3, ``%s`` for psycopg) and the
type of the JSON columns (TEXT in SQLite, JSONB in PostgreSQL); ``Dialect`` carries both.
The stored forms are the ones earlier canal versions wrote, so existing databases still read.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from canal.checkpoints.contract import RunRecord, seal, unseal

_TABLES = (
    """CREATE TABLE IF NOT EXISTS canal_runs (
        thread_id TEXT PRIMARY KEY, workflow TEXT NOT NULL, created_at TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS canal_definitions (
        digest TEXT PRIMARY KEY, workflow TEXT NOT NULL, files {json} NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS canal_calls (
        thread_id TEXT NOT NULL, key TEXT NOT NULL, step TEXT NOT NULL, digest TEXT NOT NULL,
        outcome {json}, PRIMARY KEY (thread_id, key))""",
)


@dataclass(frozen=True)
class Dialect:
    name: str
    placeholder: str
    json_type: str

    def tables(self) -> tuple[str, ...]:
        """The DDL of canal's tables, safe to run on every open."""
        return tuple(table.format(json=self.json_type) for table in _TABLES)

    def sql(self, text: str) -> str:
        """``text`` (written with ``?`` placeholders) in this dialect."""
        return text.replace("?", self.placeholder)

    def json_text(self, text: str) -> str:
        """A text value as its JSON column takes it: JSONB holds it as a JSON string."""
        return json.dumps(text, allow_nan=False) if self.json_type == "JSONB" else text


SQLITE = Dialect("sqlite", "?", "TEXT")
POSTGRES = Dialect("postgresql", "%s", "JSONB")


class Database(Protocol):
    """A connection (or pool) that runs one statement per transaction."""

    def execute(self, sql: str, params: Sequence[Any] = (),
                write: bool = False) -> tuple[list[tuple[Any, ...]], int]:
        """``(rows, rowcount)`` of one committed statement. A read (``write`` false) of a
        database that does not exist yet gets ``([], 0)`` and creates nothing."""
        ...

    def close(self) -> None:
        ...


class Tables:
    """``RunRegistry``, ``Definitions`` and ``CallJournal`` over canal's tables in ``db``;
    journaled outcomes are sealed with ``sealer`` when one is given."""

    def __init__(self, db: Database, dialect: Dialect, sealer: Any = None) -> None:
        self.db = db
        self.dialect = dialect
        self.sealer = sealer

    def _run(self, sql: str, params: Sequence[Any] = (),
             write: bool = False) -> tuple[list[tuple[Any, ...]], int]:
        return self.db.execute(self.dialect.sql(sql), params, write)

    def _rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self._run(sql, params)[0]

    # -- RunRegistry ---------------------------------------------------------------------

    def register(self, thread_id: str, workflow: str, created_at: str) -> bool:
        _, added = self._run("INSERT INTO canal_runs (thread_id, workflow, created_at) "
                             "VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                             (thread_id, workflow, created_at), write=True)
        return added == 1

    def lookup(self, thread_id: str) -> RunRecord | None:
        rows = self._rows("SELECT thread_id, workflow, created_at FROM canal_runs "
                          "WHERE thread_id = ?", (thread_id,))
        return RunRecord(*rows[0]) if rows else None

    def records(self) -> list[RunRecord]:
        rows = self._rows("SELECT thread_id, workflow, created_at FROM canal_runs "
                          "ORDER BY created_at, thread_id")
        return [RunRecord(*row) for row in rows]

    # -- Definitions ---------------------------------------------------------------------

    def save_definition(self, digest: str, workflow: str, files: dict[str, str]) -> None:
        self._run("INSERT INTO canal_definitions (digest, workflow, files) VALUES (?, ?, ?) "
                  "ON CONFLICT DO NOTHING", (digest, workflow, json.dumps(files, allow_nan=False)),
                  write=True)

    def definition(self, digest: str) -> dict[str, str] | None:
        rows = self._rows("SELECT files FROM canal_definitions WHERE digest = ?", (digest,))
        if not rows:
            return None
        files = rows[0][0]  # JSONB comes back parsed, TEXT as text
        return json.loads(files) if isinstance(files, str) else files

    def drop_definitions(self, keep: set[str]) -> int:
        stale = [d for (d,) in self._rows("SELECT digest FROM canal_definitions")
                 if d not in keep]
        for digest in stale:
            self._run("DELETE FROM canal_definitions WHERE digest = ?", (digest,), write=True)
        return len(stale)

    # -- CallJournal ---------------------------------------------------------------------

    def call_started(self, thread_id: str, key: str, step: str, digest: str) -> None:
        self._run("INSERT INTO canal_calls (thread_id, key, step, digest, outcome) "
                  "VALUES (?, ?, ?, ?, NULL) ON CONFLICT DO NOTHING",
                  (thread_id, key, step, digest), write=True)

    def call_finished(self, thread_id: str, key: str, outcome: dict[str, Any]) -> None:
        stored = self.dialect.json_text(seal(self.sealer, outcome))
        self._run("UPDATE canal_calls SET outcome = ? WHERE thread_id = ? AND key = ?",
                  (stored, thread_id, key), write=True)

    def call_record(self, thread_id: str, key: str) -> dict[str, Any] | None:
        rows = self._rows("SELECT step, digest, outcome FROM canal_calls "
                          "WHERE thread_id = ? AND key = ?", (thread_id, key))
        if not rows:
            return None
        step, digest, outcome = rows[0]
        return {"step": step, "digest": digest,
                "outcome": unseal(self.sealer, outcome) if outcome is not None else None}

    # -- forget ----------------------------------------------------------------------------

    def forget_run(self, thread_id: str) -> None:
        """Delete the run's registry row and journal (its checkpoints are the saver's)."""
        for table in ("canal_runs", "canal_calls"):
            self._run(f"DELETE FROM {table} WHERE thread_id = ?", (thread_id,), write=True)
