"""Per-run writer locks that die with their holder: file locks for a database on this
machine, thread locks for a store that lives in one process. (PostgreSQL's advisory locks
are in ``postgres.py``, beside the pool they use.)"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

from canal.checkpoints.contract import RunLock, conflict
from canal.files import private_dir, private_file


class Locks(RunLock, Protocol):
    def forget(self, thread_id: str) -> None:
        """Drop whatever the run's lock left behind (called while it is held)."""
        ...


class FileLocks:
    """An exclusive ``flock`` on ``<database>.locks/<thread>``: one writer per run on this
    machine, across processes and across store objects in one process (an SQLite database
    is never shared across machines)."""

    def __init__(self, database: Path) -> None:
        self.folder = database.with_name(database.name + ".locks")

    @contextmanager
    def lock(self, thread_id: str) -> Iterator[None]:
        private_dir(self.folder)
        path = self.folder / thread_id
        private_file(path)
        with open(path, "a") as handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError as exc:
                raise conflict(thread_id) from exc
            try:
                if not _still_named(path, handle.fileno()):
                    # The holder before us forgot the run and removed this file: whoever
                    # opens the path now gets another file, so this lock excludes nobody.
                    raise conflict(thread_id)
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def forget(self, thread_id: str) -> None:
        """Remove the lock file (a writer that opened it before is refused: ``lock``)."""
        (self.folder / thread_id).unlink(missing_ok=True)


def _still_named(path: Path, fd: int) -> bool:
    """Whether ``path`` still names the open file ``fd``."""
    try:
        named = os.stat(path)
    except FileNotFoundError:
        return False
    opened = os.fstat(fd)
    return (named.st_dev, named.st_ino) == (opened.st_dev, opened.st_ino)


class ThreadLocks:
    """A thread lock per run, for one store object whose state never leaves the process."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}

    @contextmanager
    def lock(self, thread_id: str) -> Iterator[None]:
        with self._guard:
            held = self._locks.setdefault(thread_id, threading.Lock())
        if not held.acquire(blocking=False):
            raise conflict(thread_id)
        try:
            yield
        finally:
            held.release()

    def forget(self, thread_id: str) -> None:
        """Keep the lock: the run is gone, and a new run of that id must still meet it."""
