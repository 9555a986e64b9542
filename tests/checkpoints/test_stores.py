"""Stores by URL: the registry, read-only opening, and bad URLs."""

import pytest

from canal.checkpoints import open_store
from canal.checkpoints.sqlite import SqliteStore
from canal.errors import ConfigError


@pytest.mark.parametrize("url", ["mongodb://x", "state.txt", "sqlite:/x.db", ""])
def test_unsupported_urls(url):
    with pytest.raises(ConfigError, match="is not a supported URL"):
        open_store(url)


def test_sqlite_reads_never_create_the_file(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'sub' / 'state.db'}")
    assert isinstance(store, SqliteStore)
    assert store.lookup("t") is None and store.records() == []
    assert not (tmp_path / "sub").exists()
    assert store.register("t", "wf", "2026-01-01T00:00:00")
    assert not store.register("t", "other", "2026-01-02T00:00:00")
    assert store.lookup("t") == ("t", "wf", "2026-01-01T00:00:00")
    store.close()
    reopened = open_store(str(tmp_path / "sub" / "state.db"))
    assert [r.thread_id for r in reopened.records()] == ["t"]
    reopened.close()


def test_sqlite_folder_is_private(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'home' / 'state.db'}")
    store.register("t", "wf", "now")
    store.close()
    assert (tmp_path / "home").stat().st_mode & 0o077 == 0


def test_unreachable_postgres_is_a_config_error():
    store = open_store("postgresql://nobody@127.0.0.1:1/none?connect_timeout=2")
    with pytest.raises(ConfigError, match="cannot connect to PostgreSQL"):
        store.records()


def test_postgres_registry(postgres_schema_url):
    store = open_store(postgres_schema_url())
    assert store.records() == []
    assert store.register("a", "wf", "2026-01-01")
    assert not store.register("a", "wf", "2026-01-02")
    assert store.lookup("a").workflow == "wf"
    assert store.saver() is store.saver()
    store.close()


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def any_store(request, tmp_path, postgres_schema_url):
    url = {"memory": lambda: "memory:",
           "sqlite": lambda: f"sqlite:///{tmp_path / 'state.db'}",
           "postgres": postgres_schema_url}[request.param]()
    store = open_store(url)
    store.register("t", "wf", "now")
    yield store
    store.close()


def test_the_writer_lock_is_exclusive_and_released(any_store):
    from canal.errors import RunConflict

    with any_store.lock("t"):
        with pytest.raises(RunConflict, match="run 't' is being changed by another process"):
            with any_store.lock("t"):
                pass
        with any_store.lock("other"):  # other runs are not blocked
            pass
    with any_store.lock("t"):  # released when the block ends
        pass
