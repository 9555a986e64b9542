"""Where runs live: one ``Store`` per checkpointer, chosen by ``open_store``.

The contract (``contract.py``); every backend passes one conformance suite
(``tests/checkpoints/test_conformance.py``)::

    Store
    ├── RunRegistry   register, lookup, records      which runs exist, so listing them
    │                                                never scans the checkpoints
    ├── Definitions   save_definition, definition,   workflow files by content digest: a run
    │                 drop_definitions               keeps the definition it started with
    ├── CallJournal   call_started, call_finished,   each tool call's intent, written before
    │                 call_record                    the call, and its (sealed) outcome after
    ├── RunLock       lock                           one writer per run, gone with its process
    └── saver(), head(thread_id),                    LangGraph's checkpointer; a run's latest
        forget(thread_id), close()                   checkpoint; delete a run

Where each backend keeps them (``CanalStore`` in ``store.py`` puts the parts together; the
registry, definitions and journal are one SQL implementation, ``tables.py``)::

    checkpointer       checkpoints       registry, definitions, journal   run lock
    sqlite:///x.db     SqliteSaver, x.db canal_* tables in x.db            flock x.db.locks/<id>
    postgresql://...   PostgresSaver     canal_* tables, same database     advisory lock/schema
    memory:            InMemorySaver     canal_* tables, SQLite :memory:   thread lock
    a saver object     the saver itself  canal_* tables, <home>/canal.db   flock canal.db.locks/<id>

URLs: ``sqlite:///relative/path.db`` or ``sqlite:////absolute/path.db`` (the default is
``sqlite:///.canal/state.db`` under the canal home); a bare path ending in ``.db``,
``.sqlite`` or ``.sqlite3`` means the same. ``postgresql://...`` needs ``canal[postgres]``.

Sealing: with a ``sealer`` (``canal.crypto.Sealer``), checkpoints and journaled outcomes
are encrypted wherever they reach a database. ``memory:`` never leaves the process and
seals nothing (so it never makes a key file); a saver object keeps the serializer it was
made with, and only canal's side file is sealed.

A saver object passed in (any LangGraph ``BaseCheckpointSaver``) holds only checkpoints,
which may well outlive the process; the journal must be as durable, or a crash would turn a
finished call into one to repeat. So canal keeps its tables in an SQLite file in the canal
home (``open_store(saver, sealer, home=...)``), made on the first write, and a saver object
with no home is a ``ConfigError``. Runs are listed from that side table, never by scanning
the saver.

Opening a store for reading never creates a database file, and reading a run's latest
checkpoint (``head``) from SQLite or PostgreSQL imports no LangGraph: ``heads.py`` reads the
saver's tables itself and hands anything it cannot read to the saver.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from canal.checkpoints.contract import (
    CallJournal,
    Definitions,
    RunLock,
    RunRecord,
    RunRegistry,
    Store,
    conflict,
    seal,
    unseal,
)
from canal.crypto import Sealer
from canal.errors import ConfigError

__all__ = ["CallJournal", "Definitions", "RunLock", "RunRecord", "RunRegistry", "Store",
           "conflict", "open_store", "seal", "unseal"]


def open_store(url: Any, sealer: Any = None, *, home: str | Path | None = None) -> Store:
    """The store for a checkpointer URL or a LangGraph saver object; a bad URL is a
    ConfigError, and so is a saver object with no ``home`` for canal's side file, and a
    ``Sealer`` with no key over a store that holds runs (``Sealer.refuse_new_key``)."""
    store, sealed = _open(url, sealer, home)
    if sealed is not None and isinstance(sealer, Sealer):
        sealer.refuse_new_key(lambda: bool(store.records()), sealed)
    return store


def _open(url: Any, sealer: Any, home: str | Path | None) -> tuple[Store, str | None]:
    """The store, and where it keeps the state it seals whole, so that a run there means
    sealed state (in words that hold no password); None for the others (a saver object
    passed in keeps its own serializer, ``memory:`` dies with the process)."""
    if not isinstance(url, str):
        return _saver_object_store(url, sealer, home), None
    if url in ("memory", "memory:", "memory://"):
        from canal.checkpoints.memory import memory_store

        return memory_store(), None
    if url.startswith(("postgresql://", "postgres://")):
        from canal.checkpoints.postgres import postgres_store

        return postgres_store(url, sealer), "the canal and checkpoint tables of the database"
    path = url.removeprefix("sqlite:///")
    if path != url or (":" not in url and url.endswith((".db", ".sqlite", ".sqlite3"))):
        from canal.checkpoints.sqlite import sqlite_store

        return sqlite_store(path, sealer), path
    raise ConfigError(
        f"checkpointer {url!r} is not a supported URL (use sqlite:///path.db, memory: "
        "or postgresql://...)"
    )


def _saver_object_store(saver: Any, sealer: Any, home: str | Path | None) -> Store:
    from langgraph.checkpoint.base import BaseCheckpointSaver

    from canal.checkpoints.sqlite import saver_object_store

    if not isinstance(saver, BaseCheckpointSaver):
        raise ConfigError(f"checkpointer must be a URL or a LangGraph checkpoint saver, "
                          f"not {type(saver).__name__}")
    if home is None:
        raise ConfigError(
            f"a {type(saver).__name__} passed in keeps only checkpoints; canal keeps its run "
            "registry, definitions and call journal beside it in <home>/canal.db and needs "
            "that folder: open_store(saver, sealer, home=...) (Canal passes its home)")
    return saver_object_store(saver, Path(home), sealer)
