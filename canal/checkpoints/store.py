"""The one ``Store`` implementation, put together from its parts: canal's tables in some
database, a LangGraph saver (made on first use) and the per-run locks. The backends differ
only in which parts they hand it (see the package docstring)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

from canal.checkpoints.contract import RunRecord
from canal.checkpoints.heads import Heads, Unreadable
from canal.checkpoints.locks import Locks
from canal.checkpoints.tables import Tables
from canal.failpoints import failpoint


class CanalStore:
    """A ``Store``: ``tables`` answer for the registry, definitions and journal, ``saver``
    makes (or hands back) the checkpointer, ``locks`` hold the runs' writer locks, and
    ``heads`` (when the backend has them) read a run's latest checkpoint without LangGraph."""

    def __init__(self, tables: Tables, saver: Callable[[], Any], locks: Locks,
                 heads: Heads | None = None) -> None:
        self.tables = tables
        self.locks = locks
        self.heads = heads
        self._make_saver = saver
        self._saver: Any = None

    def saver(self) -> Any:
        if self._saver is None:
            self._saver = self._make_saver()
        return self._saver

    def head(self, thread_id: str) -> Any:
        """Read from the checkpointer's tables when ``heads`` can (no LangGraph import),
        else (and for whatever they cannot read) from the saver."""
        if self.heads is not None:
            try:
                return self.heads.head(thread_id)
            except Unreadable:
                pass
        return self.saver().get_tuple({"configurable": {"thread_id": thread_id,
                                                        "checkpoint_ns": ""}})

    def since(self, thread_id: str, after: str | None) -> list[Any]:
        """The run's checkpoints newer than ``after`` (None: all), newest first: from the
        tables when ``heads`` can read them, else every one from the saver."""
        if self.heads is not None:
            try:
                return self.heads.since(thread_id, after)
            except Unreadable:
                pass
        return list(self.saver().list({"configurable": {"thread_id": thread_id,
                                                        "checkpoint_ns": ""}}))

    def register(self, thread_id: str, workflow: str, created_at: str) -> bool:
        added = self.tables.register(thread_id, workflow, created_at)
        failpoint("after-register")  # registered, the run's first state not saved yet
        return added

    def lookup(self, thread_id: str) -> RunRecord | None:
        return self.tables.lookup(thread_id)

    def records(self) -> list[RunRecord]:
        return self.tables.records()

    def save_definition(self, digest: str, workflow: str, files: dict[str, str]) -> None:
        self.tables.save_definition(digest, workflow, files)

    def definition(self, digest: str) -> dict[str, str] | None:
        return self.tables.definition(digest)

    def drop_definitions(self, keep: set[str]) -> int:
        return self.tables.drop_definitions(keep)

    def call_started(self, thread_id: str, key: str, step: str, digest: str) -> None:
        self.tables.call_started(thread_id, key, step, digest)

    def call_finished(self, thread_id: str, key: str, outcome: dict[str, Any]) -> None:
        self.tables.call_finished(thread_id, key, outcome)

    def call_record(self, thread_id: str, key: str) -> dict[str, Any] | None:
        return self.tables.call_record(thread_id, key)

    def lock(self, thread_id: str) -> AbstractContextManager[None]:
        return self.locks.lock(thread_id)

    def forget(self, thread_id: str) -> int:
        saver = self.saver()
        count = sum(1 for _ in saver.list({"configurable": {"thread_id": thread_id}}))
        saver.delete_thread(thread_id)
        self.tables.forget_run(thread_id)
        self.locks.forget(thread_id)
        return count

    def close(self) -> None:
        """Close canal's connections; a saver object passed in is its owner's to close."""
        self._saver = None
        self.tables.db.close()
