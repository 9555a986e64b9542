"""Where runs live: a LangGraph checkpointer chosen by URL, plus canal's small run registry.

URLs:

* ``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db`` (the default is
  ``sqlite:///.canal/state.db`` under the canal home); a bare path ending in ``.db`` or
  ``.sqlite`` means the same.
* ``memory:`` keeps everything in this process only (tests, notebooks).
* ``postgresql://...`` uses ``langgraph-checkpoint-postgres`` (install ``canal[postgres]``).

The registry records each run's thread id, workflow and creation time, so ``runs`` can list
runs without scanning every checkpoint. It lives in the same database as the checkpoints.
Opening a store for reading never creates a database file.

Definitions are kept content-addressed (``save_definition``/``definition``) so a run keeps
the workflow it started with whatever happens to the files on disk.

The call journal (``call_started``/``call_finished``/``call_record``) records each tool call's
intent before it is sent and its outcome after, outside the checkpoints: after a crash it
tells a finished call (replay its outcome, never call again) from one that was in flight.

Each store also has a per-run writer lock (``Store.lock``) that dies with its process: a
file lock beside the SQLite database, a PostgreSQL advisory lock, a thread lock in memory.
"""

from __future__ import annotations

from typing import Any, ContextManager, Protocol

from canal.errors import ConfigError, RunConflict


class RunRecord(tuple):
    """``(thread_id, workflow, created_at)`` of one registered run."""

    __slots__ = ()

    def __new__(cls, thread_id: str, workflow: str, created_at: str) -> "RunRecord":
        return super().__new__(cls, (thread_id, workflow, created_at))

    thread_id = property(lambda self: self[0])
    workflow = property(lambda self: self[1])
    created_at = property(lambda self: self[2])


class Store(Protocol):
    """A checkpointer plus the run registry, behind one small interface."""

    def saver(self) -> Any:
        """The LangGraph checkpointer (created, with its tables, on first use)."""
        ...

    def register(self, thread_id: str, workflow: str, created_at: str) -> bool:
        """Record a new run; False when the thread id is already taken."""
        ...

    def lookup(self, thread_id: str) -> RunRecord | None:
        ...

    def records(self) -> list[RunRecord]:
        """Every registered run, oldest first."""
        ...

    def save_definition(self, digest: str, workflow: str, files: dict[str, str]) -> None:
        """Keep a workflow definition (its files' text) under its content digest."""
        ...

    def definition(self, digest: str) -> dict[str, str] | None:
        """The files of a saved definition, or None."""
        ...

    def call_started(self, thread_id: str, key: str, step: str, digest: str) -> None:
        """Record, durably and before the call, that a tool call with ``key`` begins."""
        ...

    def call_finished(self, thread_id: str, key: str, outcome: dict[str, Any]) -> None:
        """Record the call's outcome (``{"ok": true, "result": ...}`` or an error)."""
        ...

    def call_record(self, thread_id: str, key: str) -> dict[str, Any] | None:
        """``{"step", "digest", "outcome"}`` of the call with ``key`` (outcome None while
        the call has not finished), or None when it never began."""
        ...

    def forget(self, thread_id: str) -> int:
        """Delete a run: its checkpoints, registry row and journal; the checkpoints removed."""
        ...

    def drop_definitions(self, keep: set[str]) -> int:
        """Delete saved definitions whose digest is not in ``keep``; how many went."""
        ...

    def lock(self, thread_id: str) -> ContextManager[None]:
        """Hold the run's writer lock for the block, or raise RunConflict at once.

        The lock belongs to the process (it goes when the process dies), so a crashed
        writer never blocks a run.
        """
        ...

    def close(self) -> None:
        ...


def seal(sealer: Any, outcome: dict[str, Any]) -> str:
    """A journaled outcome as stored: sealed JSON text (plain JSON without a sealer)."""
    import json

    text = json.dumps(outcome)
    return sealer.seal_text(text) if sealer else text


def unseal(sealer: Any, stored: Any) -> dict[str, Any]:
    import json

    if isinstance(stored, dict):
        return stored
    if sealer is not None and not stored.lstrip().startswith("{"):
        stored = sealer.open_text(stored)
    return json.loads(stored)


def conflict(thread_id: str) -> RunConflict:
    return RunConflict(f"run {thread_id!r} is being changed by another process right now; "
                       "nothing was applied, try again when it is done", thread_id=thread_id)


def open_store(url: Any, sealer: Any = None) -> Store:
    """The store for a checkpointer URL or a LangGraph saver object; a bad URL is a ConfigError.

    ``sealer`` (a ``canal.crypto.Sealer``) encrypts checkpoints and journaled outcomes in
    the databases; ``memory:`` state never leaves the process and is not sealed, and a saver
    object passed in keeps the serializer it was made with.
    """
    if not isinstance(url, str):
        from canal.checkpoints.memory import SaverStore

        return SaverStore(url)
    if url in ("memory", "memory:", "memory://"):
        from canal.checkpoints.memory import SaverStore

        return SaverStore()  # never leaves the process: nothing to seal, no key file to make
    if url.startswith(("postgresql://", "postgres://")):
        from canal.checkpoints.postgres import PostgresStore

        return PostgresStore(url, sealer)
    if url.startswith("sqlite:///"):
        from canal.checkpoints.sqlite import SqliteStore

        return SqliteStore(url[len("sqlite:///"):], sealer)
    if ":" not in url and url.endswith((".db", ".sqlite", ".sqlite3")):
        from canal.checkpoints.sqlite import SqliteStore

        return SqliteStore(url, sealer)
    raise ConfigError(
        f"checkpointer {url!r} is not a supported URL (use sqlite:///path.db, memory: "
        "or postgresql://...)"
    )
