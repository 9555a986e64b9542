"""``memory:``: everything in this process, per store object (tests, notebooks).

An ``InMemorySaver`` for the checkpoints, canal's tables in an in-memory SQLite database
(the same SQL as every other backend) and a thread lock per run. Nothing is sealed: the
state never leaves the process, so no key file is made. Two ``memory:`` stores share
nothing; the contents go with the object.
"""

from __future__ import annotations

from canal.checkpoints.locks import ThreadLocks
from canal.checkpoints.sqlite import SqliteDatabase
from canal.checkpoints.store import CanalStore
from canal.checkpoints.tables import SQLITE, Tables


def memory_store() -> CanalStore:
    from langgraph.checkpoint.memory import InMemorySaver

    saver = InMemorySaver()
    return CanalStore(Tables(SqliteDatabase(None), SQLITE), lambda: saver, ThreadLocks())
