"""Choosing a store by URL: the forms accepted, the bad ones, and PostgreSQL's options.
What every store does is in test_conformance.py."""

import time

import pytest

from canal.checkpoints import open_store
from canal.checkpoints.postgres import parse_url
from canal.errors import ConfigError


@pytest.mark.parametrize("url", ["mongodb://x", "state.txt", "sqlite:/x.db", ""])
def test_unsupported_urls(url):
    with pytest.raises(ConfigError, match="is not a supported URL"):
        open_store(url)


def test_a_bare_path_is_the_same_sqlite_database(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'sub' / 'state.db'}")
    assert store.register("t", "wf", "2026-01-01T00:00:00")
    store.close()
    reopened = open_store(str(tmp_path / "sub" / "state.db"))
    assert [r.thread_id for r in reopened.records()] == ["t"]
    reopened.close()


def test_sqlite_folder_is_private(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'home' / 'state.db'}")
    store.register("t", "wf", "now")
    store.close()
    assert (tmp_path / "home").stat().st_mode & 0o077 == 0


def test_postgres_url_options():
    assert parse_url("postgresql://h/db") == ("postgresql://h/db", 4, 10.0)
    assert parse_url("postgresql://h/db?pool_size=2&connect_timeout=3&sslmode=disable") == (
        "postgresql://h/db?connect_timeout=3&sslmode=disable", 2, 3.0)
    assert parse_url("postgresql://h/db?connect_timeout=0")[2] == 10.0
    for bad in ("pool_size=x", "pool_size=0", "pool_size=1", "pool_size=101",
                "connect_timeout=soon", "connect_timeout=1.5"):
        with pytest.raises(ConfigError, match="in the PostgreSQL URL must be"):
            parse_url(f"postgresql://h/db?{bad}")


def test_unreachable_postgres_fails_within_its_connect_timeout():
    store = open_store("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2")
    began = time.monotonic()
    with pytest.raises(ConfigError, match="cannot connect to PostgreSQL"):
        store.records()
    assert time.monotonic() - began < 6


def test_postgres_runs_in_other_schemas_have_their_own_locks(postgres_schema_url):
    first, second = open_store(postgres_schema_url()), open_store(postgres_schema_url())
    try:
        with first.lock("t"), second.lock("t"):  # advisory locks are database-wide
            pass
    finally:
        first.close()
        second.close()


def test_sqlite_journal_and_saver_share_one_lock_across_threads(tmp_path):
    """canal's tables and LangGraph's SqliteSaver share one connection: journal writes and
    reads from one thread and checkpoint writes and reads from another (as LangGraph's
    background thread does) must never interleave inside a transaction."""
    import threading

    from langgraph.checkpoint.base import empty_checkpoint

    store = open_store(f"sqlite:///{tmp_path / 'state.db'}")
    saver, rounds, errors = store.saver(), 300, []

    def journal() -> None:
        try:
            for n in range(rounds):
                store.call_started("j", f"k{n}", "step", "digest")
                store.call_finished("j", f"k{n}", {"ok": True, "result": n})
                assert store.call_record("j", f"k{n}")["outcome"]["result"] == n
                store.register(f"r{n}", "wf", "now")
        except Exception as exc:  # noqa: BLE001 - reported below, with its thread
            errors.append(f"journal: {exc!r}")

    def checkpoints() -> None:
        config = {"configurable": {"thread_id": "c", "checkpoint_ns": ""}}
        try:
            for n in range(rounds):
                checkpoint = empty_checkpoint()
                checkpoint["channel_values"] = {"n": n}
                config = saver.put(config, checkpoint, {"step": n}, {})
                saver.put_writes(config, [("n", n)], f"task-{n}")
                assert saver.get_tuple(config).checkpoint["channel_values"] == {"n": n}
        except Exception as exc:  # noqa: BLE001
            errors.append(f"checkpoints: {exc!r}")

    workers = [threading.Thread(target=journal), threading.Thread(target=checkpoints)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
    assert errors == []
    assert len(store.records()) == rounds
    assert len(list(saver.list({"configurable": {"thread_id": "c"}}))) == rounds
    store.close()


def test_a_postgres_pool_with_no_free_connection_is_a_config_error(postgres_schema_url):
    store = open_store(postgres_schema_url() + "&pool_size=2&connect_timeout=2")
    try:
        with store.lock("a"), store.tables.db.connection():  # both connections taken
            began = time.monotonic()
            with pytest.raises(ConfigError, match=r"no PostgreSQL connection was free within "
                                                  r"2 s \(pool_size=2\); raise pool_size"):
                store.lock("b").__enter__()
            with pytest.raises(ConfigError, match="no PostgreSQL connection was free"):
                store.records()
            assert time.monotonic() - began < 8
        assert store.records() == []  # both came back
    finally:
        store.close()


def test_a_sqlite_lock_taken_on_a_forgotten_runs_file_is_refused(tmp_path, monkeypatch):
    """prune and a failed start forget a run (its lock file goes) while holding its lock. A
    process that opened the lock file just before, and gets the lock just after, holds a
    file nobody else will ever open: it must not go on as the run's writer, or two writers
    (it, and whoever opens the new file) would start the same thread id."""
    import fcntl

    from canal.checkpoints import locks as locks_module
    from canal.errors import RunConflict

    store = open_store(f"sqlite:///{tmp_path / 'state.db'}")
    real_flock, raced = fcntl.flock, []

    class Racing:
        LOCK_EX, LOCK_NB, LOCK_UN = fcntl.LOCK_EX, fcntl.LOCK_NB, fcntl.LOCK_UN

        @staticmethod
        def flock(handle, operation):
            if operation & fcntl.LOCK_EX and not raced:  # between our open and our flock,
                raced.append(True)                      # the holder forgot the run
                store.locks.forget("t")
            real_flock(handle, operation)

    with store.lock("t"):  # the lock file exists
        pass
    monkeypatch.setattr(locks_module, "fcntl", Racing)
    with pytest.raises(RunConflict):
        with store.lock("t"):
            pass
    with store.lock("t"):  # a new file, and a lock that holds
        with pytest.raises(RunConflict):
            with open_store(f"sqlite:///{tmp_path / 'state.db'}").lock("t"):
                pass
    store.close()
