"""The store contract: four small protocols, and ``Store``, which is all of them plus the saver.

Every backend passes the same conformance suite (``tests/checkpoints/test_conformance.py``);
the package docstring says which backend keeps what where.
"""

from __future__ import annotations

import json
from contextlib import AbstractContextManager
from typing import Any, Protocol

from canal.errors import RunConflict


class RunRecord(tuple):
    """``(thread_id, workflow, created_at)`` of one registered run."""

    __slots__ = ()

    def __new__(cls, thread_id: str, workflow: str, created_at: str) -> RunRecord:
        return super().__new__(cls, (thread_id, workflow, created_at))

    thread_id = property(lambda self: self[0])
    workflow = property(lambda self: self[1])
    created_at = property(lambda self: self[2])


class RunRegistry(Protocol):
    """Which runs exist, so listing them never scans the checkpoints."""

    def register(self, thread_id: str, workflow: str, created_at: str) -> bool:
        """Record a new run; False when the thread id is already taken."""
        ...

    def lookup(self, thread_id: str) -> RunRecord | None:
        """The run's record, or None when no run has that thread id."""
        ...

    def records(self) -> list[RunRecord]:
        """Every registered run, oldest first (ties by thread id)."""
        ...


class Definitions(Protocol):
    """Workflow definitions kept by content digest, so a run keeps the one it started with."""

    def save_definition(self, digest: str, workflow: str, files: dict[str, str]) -> None:
        """Keep a workflow definition (its files' text) under its content digest; saving a
        digest that is already kept changes nothing."""
        ...

    def definition(self, digest: str) -> dict[str, str] | None:
        """The files of a saved definition, or None."""
        ...

    def drop_definitions(self, keep: set[str]) -> int:
        """Delete saved definitions whose digest is not in ``keep``; how many went."""
        ...


class CallJournal(Protocol):
    """Each tool call's intent before it is sent and its outcome after, outside the
    checkpoints: after a crash it tells a finished call (replay its outcome, never call
    again) from one that was in flight. Outcomes are sealed where they leave the process."""

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


class RunLock(Protocol):
    """One writer per run."""

    def lock(self, thread_id: str) -> AbstractContextManager[None]:
        """Hold the run's writer lock for the block, or raise RunConflict at once.

        The lock belongs to the process (it goes when the process dies), so a crashed
        writer never blocks a run.
        """
        ...


class Store(RunRegistry, Definitions, CallJournal, RunLock, Protocol):
    """Everything canal keeps about runs: the four parts above plus LangGraph's saver."""

    def saver(self) -> Any:
        """The LangGraph checkpointer (created, with its tables, on first use)."""
        ...

    def head(self, thread_id: str) -> Any:
        """The run's latest checkpoint as LangGraph's ``CheckpointTuple`` gives it (config,
        checkpoint, parent config, pending writes), or None before its first. Backends
        whose tables canal can read answer without importing LangGraph
        (``canal.checkpoints.heads``)."""
        ...

    def since(self, thread_id: str, after: str | None) -> list[Any]:
        """The run's checkpoints (``CheckpointTuple``s, pending writes not needed) newer
        than checkpoint ``after`` (None: all of them), newest first; a backend may give
        older ones too (a saver lists them all)."""
        ...

    def forget(self, thread_id: str) -> int:
        """Delete a run: its checkpoints, registry row and journal; the checkpoints removed."""
        ...

    def close(self) -> None:
        """Release connections (a saver object passed in stays open: its owner closes it)."""
        ...


def seal(sealer: Any, outcome: dict[str, Any]) -> str:
    """A journaled outcome as stored: sealed JSON text (plain JSON without a sealer)."""
    text = json.dumps(outcome, allow_nan=False)
    return sealer.seal_text(text) if sealer else text


def unseal(sealer: Any, stored: Any) -> dict[str, Any]:
    """The outcome ``seal`` stored (a dict is taken as already open)."""
    if isinstance(stored, dict):
        return stored
    if sealer is not None and not stored.lstrip().startswith("{"):
        stored = sealer.open_text(stored)
    return json.loads(stored)


def conflict(thread_id: str) -> RunConflict:
    """The error the loser of a run's writer lock gets."""
    return RunConflict(f"run {thread_id!r} is being changed by another process right now; "
                       "nothing was applied, try again when it is done", thread_id=thread_id)
