"""A run's latest checkpoint, read straight from the checkpointer's own tables.

The read-only commands (``current``, ``runs``) need one row per run: its latest checkpoint
and the writes pending on it. LangGraph's saver would answer too, but importing it costs a
new process most of a second (``langchain_core`` for one type, then LangGraph's
serializer), and an agent calls these commands constantly. canal's state is JSON-plain
(every channel holds JSON values; sensitive ones are sealed by canal first), so the forms
LangGraph stores it in are few, and this module reads them with ``ormsgpack`` alone:

- ``msgpack``: LangGraph's serializer, unpacked as it packs plain values;
- ``null`` and ``empty``: no value;
- ``<form>+aesgcm``: the same, encrypted by ``canal.crypto.Sealer`` (see ``serde()``).

The tables are those of ``SqliteSaver`` (``checkpoints``, ``writes``; channel values inside
the checkpoint) and ``PostgresSaver`` (``checkpoints`` with JSONB, ``checkpoint_blobs``,
``checkpoint_writes``; primitive channel values inline, the rest in blobs by version).

Whatever falls outside those forms (an object LangGraph packs as an extension type in a
channel value, a ``pickle`` or ``json`` form, a table laid out otherwise) raises
``Unreadable``, and the store asks the saver instead: never a wrong answer, only a slower
one. A pending write's extension object (``__interrupt__`` holds LangGraph's
``Interrupt``) is kept as an opaque ``Foreign``: nothing canal reads from a head looks
inside one. ``tests/checkpoints/test_heads.py`` holds every head read here equal to the
saver's, run after run.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

from canal.checkpoints.tables import Database

ROOT_NS = ""  # the checkpoint namespace of the run's own graph (subgraphs have their own)


class Unreadable(Exception):
    """The head is stored in a form only LangGraph's saver reads."""


class Foreign(NamedTuple):
    """An object LangGraph stored as a msgpack extension (type code and packed data)."""

    code: int
    data: bytes


class Head(NamedTuple):
    """The latest checkpoint of a run, as LangGraph's ``CheckpointTuple`` gives it (the
    fields canal reads; ``metadata`` is not read and stays empty)."""

    config: dict[str, Any]
    checkpoint: dict[str, Any]
    metadata: dict[str, Any]
    parent_config: dict[str, Any] | None
    pending_writes: list[tuple[str, str, Any]]


def loads(form: str, data: bytes | None, sealer: Any, foreign: bool = False) -> Any:
    """A stored value (``form`` as LangGraph names it, ``data`` its bytes); with
    ``foreign``, LangGraph's objects inside are kept as ``Foreign``, else they make the
    value ``Unreadable``."""
    if "+" in form:
        if sealer is None or data is None:
            raise Unreadable(f"{form} needs the sealer")
        form, cipher = form.split("+", 1)
        data = sealer.decrypt(cipher, bytes(data))
    if form in ("null", "empty"):
        return None
    if form != "msgpack" or data is None:
        raise Unreadable(f"values stored as {form!r} are read by the saver")
    import ormsgpack

    objects: list[Foreign] = []

    def keep(code: int, packed: bytes) -> Foreign:
        objects.append(Foreign(code, packed))
        return objects[-1]

    value = ormsgpack.unpackb(bytes(data), ext_hook=keep, option=ormsgpack.OPT_NON_STR_KEYS)
    if objects and not foreign:
        raise Unreadable(f"a checkpoint value holds a LangGraph object "
                         f"(extension {objects[0].code})")
    return value


def _write(task_id: str, channel: str, form: str, data: bytes | None,
           sealer: Any) -> tuple[str, str, Any]:
    return task_id, channel, loads(form, data, sealer, foreign=True)


def _head(thread_id: str, checkpoint_id: str, parent_id: str | None,
          checkpoint: dict[str, Any], writes: list[tuple[str, str, Any]]) -> Head:
    def config(of: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ROOT_NS,
                                 "checkpoint_id": of}}

    return Head(config(checkpoint_id), checkpoint, {},
                config(parent_id) if parent_id else None, writes)


class Heads(Protocol):
    def head(self, thread_id: str) -> Head | None:
        """The run's latest checkpoint, None before its first; Unreadable when only the
        saver can read it."""
        ...

    def since(self, thread_id: str, after: str | None) -> list[Head]:
        """The run's checkpoints newer than checkpoint ``after`` (None: all), newest first,
        without their pending writes; Unreadable when only the saver can read them."""
        ...


class SqliteHeads:
    """Heads from ``SqliteSaver``'s tables (the store's own connection and lock)."""

    SQL = ("SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint FROM checkpoints "
           "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id > ? "
           "ORDER BY checkpoint_id DESC")

    def __init__(self, db: Database, sealer: Any) -> None:
        self.db = db
        self.sealer = sealer

    def head(self, thread_id: str) -> Head | None:
        rows = self._rows(self.SQL + " LIMIT 1", (thread_id, ROOT_NS, ""))
        if not rows:
            return None
        checkpoint_id, parent_id, form, data = rows[0]
        writes = self._rows(
            "SELECT task_id, channel, type, value, task_path, idx FROM writes "
            "WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?",
            (thread_id, ROOT_NS, checkpoint_id))
        return _head(thread_id, checkpoint_id, parent_id, loads(form, data, self.sealer),
                     [_write(t, c, f, v, self.sealer)
                      for t, c, f, v, _, _ in sorted(writes, key=lambda w: (w[4], w[0], w[5]))])

    def since(self, thread_id: str, after: str | None) -> list[Head]:
        rows = self._rows(self.SQL, (thread_id, ROOT_NS, after or ""))
        return [_head(thread_id, checkpoint_id, parent_id, loads(form, data, self.sealer), [])
                for checkpoint_id, parent_id, form, data in rows]

    def _rows(self, sql: str, params: tuple[str, ...]) -> list[tuple[Any, ...]]:
        import sqlite3

        try:
            return self.db.execute(sql, params)[0]
        except sqlite3.OperationalError as exc:  # no such table, or a column: an older
            raise Unreadable(str(exc)) from exc  # saver's layout


class PostgresHeads:
    """Heads from ``PostgresSaver``'s tables: the checkpoint row, the blobs of the
    channel versions it names, and its pending writes, in one statement."""

    SQL = """
        SELECT c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint,
            (SELECT array_agg(array[b.channel::bytea, b.type::bytea, b.blob])
             FROM jsonb_each_text(c.checkpoint -> 'channel_versions') AS v
             JOIN checkpoint_blobs b ON b.thread_id = c.thread_id
                 AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = v.key
                 AND b.version = v.value),
            {writes}
        FROM checkpoints c WHERE c.thread_id = %s AND c.checkpoint_ns = %s
            AND c.checkpoint_id > %s
        ORDER BY c.checkpoint_id DESC"""
    WRITES = """(SELECT array_agg(array[w.task_id::bytea, w.channel::bytea, w.type::bytea,
                                    w.blob, convert_to(w.task_path, 'UTF8'),
                                    w.idx::text::bytea])
             FROM checkpoint_writes w WHERE w.thread_id = c.thread_id
                 AND w.checkpoint_ns = c.checkpoint_ns AND w.checkpoint_id = c.checkpoint_id)"""

    def __init__(self, db: Database, sealer: Any) -> None:
        self.db = db
        self.sealer = sealer

    def head(self, thread_id: str) -> Head | None:
        found = self._heads(self.SQL.format(writes=self.WRITES) + " LIMIT 1", thread_id, "")
        return found[0] if found else None

    def since(self, thread_id: str, after: str | None) -> list[Head]:
        return self._heads(self.SQL.format(writes="NULL"), thread_id, after or "")

    def _heads(self, sql: str, thread_id: str, after: str) -> list[Head]:
        import psycopg

        try:
            rows, _ = self.db.execute(sql, (thread_id, ROOT_NS, after))
        except psycopg.errors.UndefinedTable as exc:  # the saver never made its tables
            raise Unreadable(str(exc)) from exc
        return [self._head(thread_id, *row) for row in rows]

    def _head(self, thread_id: str, checkpoint_id: str, parent_id: str | None,
              checkpoint: dict[str, Any], blobs: Any, writes: Any) -> Head:
        values = dict(checkpoint.get("channel_values") or {})
        for channel, form, data in blobs or []:
            if form.decode() != "empty":
                values[channel.decode()] = loads(form.decode(), data, self.sealer)
        ordered = sorted(writes or [], key=lambda w: (w[4].decode(), w[0].decode(), int(w[5])))
        return _head(thread_id, checkpoint_id, parent_id,
                     {**checkpoint, "channel_values": values},
                     [_write(t.decode(), c.decode(), f.decode(), v, self.sealer)
                      for t, c, f, v, _, _ in ordered])
