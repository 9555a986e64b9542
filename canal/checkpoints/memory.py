"""A store over any LangGraph checkpointer instance, with no table of its own.

Used for ``memory:`` and when a caller hands ``Canal`` a saver object. Run listing scans the
saver's checkpoints, which is fine in one process and slow for large databases; the SQLite
and PostgreSQL stores keep a registry table instead.
"""

from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Any, Iterator

from canal.checkpoints import RunRecord, conflict

_GUARD = threading.Lock()
_LOCKS: dict[tuple[int, str], threading.Lock] = {}
# Definitions and the call journal live beside the saver, for as long as this process: a
# saver object cannot hold them, and every Canal over the same saver here must see them.
_DEFINITIONS: dict[tuple[int, str], dict[str, str]] = {}
_CALLS: dict[tuple[int, str, str], dict[str, Any]] = {}


class SaverStore:
    def __init__(self, saver: Any = None) -> None:
        if saver is None:
            from langgraph.checkpoint.memory import InMemorySaver

            saver = InMemorySaver()
        self._saver = saver
        self._new: dict[str, RunRecord] = {}

    def saver(self) -> Any:
        return self._saver

    def register(self, thread_id: str, workflow: str, created_at: str) -> bool:
        if self.lookup(thread_id) is not None:
            return False
        self._new[thread_id] = RunRecord(thread_id, workflow, created_at)
        return True

    def lookup(self, thread_id: str) -> RunRecord | None:
        if thread_id in self._new:
            return self._new[thread_id]
        return next((r for r in self.records() if r.thread_id == thread_id), None)

    def records(self) -> list[RunRecord]:
        found: dict[str, RunRecord] = dict(self._new)
        for item in self._saver.list(None):
            thread_id = item.config["configurable"]["thread_id"]
            values = item.checkpoint.get("channel_values", {})
            if item.config["configurable"].get("checkpoint_ns") or "workflow" not in values:
                continue
            # list() runs newest first, so the last write per thread is its oldest checkpoint
            found[thread_id] = RunRecord(thread_id, values["workflow"], item.checkpoint["ts"])
        return sorted(found.values(), key=lambda r: (r.created_at, r.thread_id))

    def save_definition(self, digest: str, workflow: str, files: dict[str, str]) -> None:
        with _GUARD:
            _DEFINITIONS.setdefault((id(self._saver), digest), dict(files))

    def definition(self, digest: str) -> dict[str, str] | None:
        found = _DEFINITIONS.get((id(self._saver), digest))
        return dict(found) if found is not None else None

    def call_started(self, thread_id: str, key: str, step: str, digest: str) -> None:
        with _GUARD:
            _CALLS.setdefault((id(self._saver), thread_id, key),
                              {"step": step, "digest": digest, "outcome": None})

    def call_finished(self, thread_id: str, key: str, outcome: dict[str, Any]) -> None:
        with _GUARD:
            _CALLS[(id(self._saver), thread_id, key)]["outcome"] = outcome

    def call_record(self, thread_id: str, key: str) -> dict[str, Any] | None:
        found = _CALLS.get((id(self._saver), thread_id, key))
        return dict(found) if found is not None else None

    def forget(self, thread_id: str) -> int:
        count = sum(1 for _ in self._saver.list({"configurable": {"thread_id": thread_id}}))
        self._saver.delete_thread(thread_id)
        self._new.pop(thread_id, None)
        with _GUARD:
            for key in [k for k in _CALLS if k[0] == id(self._saver) and k[1] == thread_id]:
                del _CALLS[key]
        return count

    def drop_definitions(self, keep: set[str]) -> int:
        with _GUARD:
            stale = [k for k in _DEFINITIONS if k[0] == id(self._saver) and k[1] not in keep]
            for key in stale:
                del _DEFINITIONS[key]
        return len(stale)

    @contextmanager
    def lock(self, thread_id: str) -> Iterator[None]:
        """A thread lock per (saver, run): the saver lives in this process only."""
        with _GUARD:
            held = _LOCKS.setdefault((id(self._saver), thread_id), threading.Lock())
        if not held.acquire(blocking=False):
            raise conflict(thread_id)
        try:
            yield
        finally:
            held.release()

    def close(self) -> None:
        """Nothing to release: the saver belongs to whoever created it."""
