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
    for bad in ("pool_size=x", "pool_size=0", "connect_timeout=soon"):
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
