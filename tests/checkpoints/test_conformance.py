"""One conformance suite for every store: ``memory:``, an SQLite URL, a PostgreSQL URL and
a saver object passed in. Each backend is opened exactly as a process would (the child
processes call ``open_backend`` too); the saver part itself is LangGraph's own suite."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from canal.checkpoints import Store, open_store
from canal.crypto import Sealer
from canal.errors import ConfigError, RunConflict

ROOT = Path(__file__).resolve().parents[2]
SECRET = "hunter2-the-secret-token"
CONFLICT = "run 't' is being changed by another process"


def open_backend(kind: str, home: str, target: str) -> Store:
    """The store of ``kind`` (``target`` is a URL, or the saver's SQLite file)."""
    if kind == "saver":
        from langgraph.checkpoint.sqlite import SqliteSaver

        saver = SqliteSaver(sqlite3.connect(target, check_same_thread=False))
        return open_store(saver, Sealer(Path(home)), home=home)
    return open_store(target, Sealer(Path(home)))


class Backend:
    def __init__(self, kind: str, home: Path, target: str) -> None:
        self.kind, self.home, self.target = kind, home, target
        self.durable = kind != "memory"
        self.opened: list[Store] = []

    def open(self) -> Store:
        store = open_backend(self.kind, str(self.home), self.target)
        self.opened.append(store)
        return store

    def child(self, code: str, *args: str) -> subprocess.Popen:
        """A new process that opens this store as ``store``, then runs ``code``."""
        head = ("import sys\nfrom tests.checkpoints.test_conformance import open_backend\n"
                f"store = open_backend({self.kind!r}, {str(self.home)!r}, {self.target!r})\n")
        return subprocess.Popen([sys.executable, "-c", head + code, *args], cwd=ROOT,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def stored(self) -> str:
        """Everything the backend wrote where it keeps the journal, as text."""
        if self.kind == "postgres":
            import psycopg

            with psycopg.connect(self.target) as conn:
                rows = conn.execute("SELECT thread_id, key, outcome::text FROM canal_calls")
                return repr(rows.fetchall())
        files = [p for p in self.home.parent.rglob("*") if p.is_file()]
        return "".join(p.read_bytes().decode("latin-1") for p in files)


@pytest.fixture(params=["memory", "sqlite", "postgres", "saver"])
def backend(request: pytest.FixtureRequest, tmp_path: Path,
            postgres_schema_url: Callable[[], str]) -> Iterator[Backend]:
    target = {"memory": lambda: "memory:",
              "sqlite": lambda: f"sqlite:///{tmp_path / 'state.db'}",
              "postgres": postgres_schema_url,
              "saver": lambda: str(tmp_path / "saver.db")}[request.param]()
    made = Backend(request.param, tmp_path / "home", target)
    yield made
    for store in made.opened:
        store.close()


@pytest.fixture
def store(backend: Backend) -> Store:
    return backend.open()


def finish(proc: subprocess.Popen) -> str:
    out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    return out


def put_checkpoint(store: Store, thread_id: str) -> None:
    from langgraph.checkpoint.base import empty_checkpoint

    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    store.saver().put(config, empty_checkpoint(), {}, {})


def latest(store: Store, thread_id: str) -> Any:
    return store.saver().get_tuple({"configurable": {"thread_id": thread_id}})


# -- RunRegistry ---------------------------------------------------------------------------

def test_registry_orders_runs_and_refuses_a_taken_id(store):
    assert store.records() == [] and store.lookup("a") is None
    assert store.register("b", "wf", "2026-01-02T00:00:00")
    assert store.register("a", "wf", "2026-01-02T00:00:00")
    assert store.register("c", "other", "2026-01-01T00:00:00")
    assert not store.register("a", "taken", "2026-01-03T00:00:00")
    assert store.lookup("a") == ("a", "wf", "2026-01-02T00:00:00")
    assert store.lookup("c").workflow == "other"
    assert [r.thread_id for r in store.records()] == ["c", "a", "b"]


def test_reads_create_no_file(backend, store):
    assert store.lookup("t") is None and store.records() == []
    assert store.definition("d") is None and store.call_record("t", "k") is None
    assert store.drop_definitions(set()) == 0
    assert not backend.home.parent.joinpath("state.db").exists()
    assert not backend.home.exists()


# -- Definitions ---------------------------------------------------------------------------

def test_definitions_are_kept_once_and_dropped_unless_kept(store):
    files = {"WorkFlow.md": "---\nname: wf\n---\n", "references/01.md": "ünïcode"}
    store.save_definition("d1", "wf", files)
    store.save_definition("d1", "wf", {"other": "ignored"})  # a digest names one content
    store.save_definition("d2", "wf", {"WorkFlow.md": "v2"})
    assert store.definition("d1") == files
    assert store.drop_definitions({"d1"}) == 1
    assert store.definition("d2") is None and store.definition("d1") == files
    assert store.drop_definitions({"d1"}) == 0


# -- CallJournal ---------------------------------------------------------------------------

def test_journal_records_intent_then_outcome(store):
    assert store.call_record("t", "k") is None
    store.call_started("t", "k", "create-role", "digest")
    assert store.call_record("t", "k") == {"step": "create-role", "digest": "digest",
                                           "outcome": None}
    store.call_started("t", "k", "again", "other")  # a started call is not restarted
    outcome = {"ok": True, "result": {"role_id": "r-1", "tags": ["a", 1, None]}}
    store.call_finished("t", "k", outcome)
    assert store.call_record("t", "k") == {"step": "create-role", "digest": "digest",
                                           "outcome": outcome}
    assert store.call_record("t", "other") is None and store.call_record("u", "k") is None


def test_journal_outlives_the_process_both_ways(backend, store):
    if not backend.durable:
        pytest.skip("memory: keeps nothing beyond its process")
    store.call_started("t", "parent", "s", "d")
    store.call_finished("t", "parent", {"ok": True, "result": "from the parent"})
    child = backend.child(
        "import json\n"
        "print(json.dumps(store.call_record('t', 'parent')))\n"
        "store.call_started('t', 'child', 's', 'd')\n"
        "store.call_finished('t', 'child', {'ok': False, 'error': 'from the child'})\n"
        "store.close()\n")
    seen = json.loads(finish(child))
    assert seen["outcome"] == {"ok": True, "result": "from the parent"}
    assert store.call_record("t", "child")["outcome"] == {"ok": False,
                                                          "error": "from the child"}
    assert backend.open().call_record("t", "child")["step"] == "s"


def test_outcomes_are_sealed_where_they_are_stored(backend, store):
    if not backend.durable:
        pytest.skip("memory: state never leaves the process, so it is not sealed")
    store.call_started("t", "k", "s", "d")
    store.call_finished("t", "k", {"ok": True, "result": {"token": SECRET}})
    assert store.call_record("t", "k")["outcome"]["result"]["token"] == SECRET
    stored = backend.stored()
    assert "aesgcm:" in stored  # the sealed row is where we look
    assert SECRET not in stored


# -- forget ----------------------------------------------------------------------------------

def test_forget_removes_one_run_and_leaves_the_others(store):
    for thread_id in ("t", "u"):
        store.register(thread_id, "wf", "now")
        store.call_started(thread_id, "k", "s", "d")
        put_checkpoint(store, thread_id)
    with store.lock("t"):  # as retention does
        assert store.forget("t") == 1
    assert store.lookup("t") is None and store.call_record("t", "k") is None
    assert latest(store, "t") is None
    assert store.lookup("u") is not None and store.call_record("u", "k") is not None
    assert latest(store, "u") is not None
    assert [r.thread_id for r in store.records()] == ["u"]
    assert store.register("t", "wf", "later")  # the id is free again
    with store.lock("t"):
        pass


# -- RunLock ---------------------------------------------------------------------------------

def test_the_writer_lock_is_exclusive_and_released(backend, store):
    with store.lock("t"):
        with pytest.raises(RunConflict, match=CONFLICT):
            with store.lock("t"):
                pass
        if backend.durable:  # a second store object on the same state meets the lock too
            with pytest.raises(RunConflict, match=CONFLICT):
                with backend.open().lock("t"):
                    pass
        with store.lock("other"):  # other runs are not blocked
            pass
    with store.lock("t"):  # released when the block ends
        pass


def wait_for(path: Path, proc: subprocess.Popen, seconds: float = 15) -> None:
    deadline = time.monotonic() + seconds
    while not path.exists():
        assert proc.poll() is None, proc.communicate()[1]
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        time.sleep(0.01)


HOLD = """
import pathlib, time
ready, release = map(pathlib.Path, sys.argv[1:3])
with store.lock("t"):
    ready.touch()
    deadline = time.monotonic() + 15
    while not release.exists() and time.monotonic() < deadline:
        time.sleep(0.01)
store.close()
"""


def test_the_writer_lock_is_exclusive_across_processes(backend, store, tmp_path):
    if not backend.durable:
        pytest.skip("memory: has no other process to exclude")
    ready, release = tmp_path / "ready", tmp_path / "release"
    child = backend.child(HOLD, str(ready), str(release))
    try:
        wait_for(ready, child)
        with pytest.raises(RunConflict, match=CONFLICT):
            with store.lock("t"):
                pass
        with store.lock("other"):
            pass
    finally:
        release.touch()
        finish(child)
    with store.lock("t"):  # the child's lock went with its block
        pass


# -- a saver object passed in ----------------------------------------------------------------

def test_a_saver_object_needs_a_home():
    from langgraph.checkpoint.memory import InMemorySaver

    with pytest.raises(ConfigError, match=r"needs that folder.*home="):
        open_store(InMemorySaver())
    with pytest.raises(ConfigError, match="not dict"):
        open_store({}, home="x")


def test_a_saver_object_keeps_canal_tables_in_a_private_side_file(tmp_path):
    from langgraph.checkpoint.memory import InMemorySaver

    home = tmp_path / "home"
    store = open_store(InMemorySaver(), Sealer(home), home=home)
    assert store.records() == [] and not home.exists()
    assert store.register("t", "wf", "now")
    assert (home / "canal.db").is_file() and home.stat().st_mode & 0o077 == 0
    with store.lock("t"):
        assert (home / "canal.db.locks" / "t").exists()
    store.close()


def test_memory_stores_share_nothing():
    first, second = open_store("memory:"), open_store("memory:")
    first.register("t", "wf", "now")
    first.save_definition("d", "wf", {"a": "b"})
    first.call_started("t", "k", "s", "d")
    with first.lock("t"), second.lock("t"):
        pass
    assert second.lookup("t") is None and second.definition("d") is None
    assert second.call_record("t", "k") is None and first.lookup("t") is not None


# -- the saver part: LangGraph's own conformance suite ---------------------------------------

BASE = {"put", "put_writes", "get_tuple", "list", "delete_thread"}


@pytest.mark.parametrize("kind", ["InMemorySaver", "AsyncSqliteSaver"])
def test_langgraph_saver_conformance_with_canal_sealing(kind, tmp_path):
    conformance = pytest.importorskip("langgraph.checkpoint.conformance")
    serde = Sealer(tmp_path / "home").serde()

    async def saver() -> Any:
        if kind == "InMemorySaver":
            from langgraph.checkpoint.memory import InMemorySaver

            yield InMemorySaver(serde=serde)
            return
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        async with aiosqlite.connect(tmp_path / "async.db") as conn:
            yield AsyncSqliteSaver(conn, serde=serde)

    registered = conformance.checkpointer_test(name=f"canal-sealed-{kind}")(saver)
    report = asyncio.run(conformance.validate(registered, capabilities=BASE))
    failures = {name: result.failures for name, result in report.results.items()
                if result.passed is False}
    assert report.passed_all_base(), failures
    assert {name for name, r in report.results.items() if r.passed} == BASE


@pytest.mark.parametrize("backend", ["sqlite", "postgres"], indirect=True)
def test_the_stores_sync_savers_pass_the_async_suite_through_threads(backend):
    """SQLite's and PostgreSQL's savers are synchronous; canal gives them async methods
    that run the synchronous ones in a worker thread (``canal.checkpoints.threaded``), so
    ``ainvoke`` works on a graph compiled with the store's saver."""
    conformance = pytest.importorskip("langgraph.checkpoint.conformance")

    async def saver() -> Any:
        yield backend.open().saver()

    registered = conformance.checkpointer_test(name=f"canal-threaded-{backend.kind}")(saver)
    report = asyncio.run(conformance.validate(registered, capabilities=BASE))
    failures = {name: result.failures for name, result in report.results.items()
                if result.passed is False}
    assert report.passed_all_base(), failures
