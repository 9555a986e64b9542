"""A start either makes a run or leaves nothing behind: a start that fails after the run was
registered (a database error, a pool timeout, a kill) leaves no run, its thread id stays
free, and ``runs``/``prune`` survive what older versions left (a registry row with no saved
state). SQLite and PostgreSQL, each with a real trigger that fails the checkpoint written
right after the run was registered."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from canal import Canal, RunNotFound
from tests.conftest import project_steps, write_workflow

LATER = datetime.now(timezone.utc) + timedelta(days=2)
# The third checkpoint of thread 'bad' is the one after run.begin registered the run.
SQLITE_TRIGGER = """CREATE TRIGGER refuse BEFORE INSERT ON checkpoints
    WHEN NEW.thread_id = 'bad'
         AND (SELECT count(*) FROM checkpoints c WHERE c.thread_id = 'bad') >= 2
    BEGIN SELECT RAISE(ABORT, 'disk says no'); END"""
POSTGRES_TRIGGER = """
CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
    IF NEW.thread_id = 'bad'
       AND (SELECT count(*) FROM checkpoints c WHERE c.thread_id = 'bad') >= 2 THEN
        RAISE EXCEPTION 'disk says no';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER refuse BEFORE INSERT ON checkpoints FOR EACH ROW EXECUTE FUNCTION refuse();
"""


@pytest.fixture
def project(workflows):
    return write_workflow(workflows, "create-project", project_steps())


@pytest.fixture(params=["sqlite", "postgres"])
def database(request, tmp_path, postgres_schema_url):
    """``(checkpointer URL, run SQL on it)`` for a real database."""
    if request.param == "sqlite":
        import sqlite3

        path = tmp_path / "state" / "state.db"

        def sql(text: str) -> None:
            with sqlite3.connect(path) as conn:
                conn.executescript(text)

        return f"sqlite:///{path}", sql
    import psycopg

    url = postgres_schema_url()

    def run(text: str) -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(text)

    return url, run


@pytest.fixture
def on_database(workflows, tmp_path, recorder, database):
    made = []

    def make():
        made.append(Canal(workflows=workflows, home=tmp_path / ".canal",
                          checkpointer=database[0], tools=recorder.client()))
        return made[-1]

    yield make
    for canal in made:
        canal.close()


def test_a_start_that_fails_after_registering_leaves_no_run(project, on_database, database):
    url, sql = database
    make_canal = on_database
    make_canal().start("create-project", thread_id="good")
    sql(SQLITE_TRIGGER if url.startswith("sqlite") else POSTGRES_TRIGGER)
    with pytest.raises(Exception, match="disk says no"):
        make_canal().start("create-project", thread_id="bad")

    canal = make_canal()
    assert canal.store.lookup("bad") is None
    assert not canal.has_run("bad")
    for act in (canal.current, canal.abort, canal.history):
        with pytest.raises(RunNotFound, match="no run with thread id 'bad'"):
            act("bad")
    assert [r["thread_id"] for r in canal.runs()] == ["good"]
    assert make_canal().prune(timedelta(days=1), include_waiting=True,
                                              now=LATER)["count"] == 1

    sql("DROP TRIGGER refuse" if url.startswith("sqlite") else "DROP TRIGGER refuse ON checkpoints")
    env = make_canal().start("create-project", thread_id="bad")
    assert env.status == "awaiting_input"
    assert make_canal().advance("bad", {"project_name": "p",
                                                        "host": "p.example.com"}).step.id == "summary"


def leftovers(canal):
    """What older versions (or a start killed at the wrong moment) left: a registry row with
    no saved state, and one whose only checkpoints were written before run.begin ran."""
    canal.sealer.seal_text("")  # the key the version that wrote them made
    canal.store.register("no-state", "create-project", "2020-01-01T00:00:00.000+00:00")
    saver = canal.store.saver()
    from langgraph.checkpoint.base import empty_checkpoint

    config = {"configurable": {"thread_id": "no-begin", "checkpoint_ns": ""}}
    saver.put(config, empty_checkpoint(), {"source": "input", "step": -1}, {})
    canal.store.register("no-begin", "create-project", "2020-01-01T00:00:00.000+00:00")


def test_every_command_handles_a_start_that_never_finished(project, make_canal):
    canal = make_canal()
    canal.start("create-project", thread_id="real")
    leftovers(canal)

    fresh = make_canal()
    assert [r["thread_id"] for r in fresh.runs()] == ["real"]
    for thread in ("no-state", "no-begin"):
        assert not fresh.has_run(thread)
        for act in (fresh.current, fresh.abort, fresh.recover, fresh.migrate, fresh.history):
            with pytest.raises(RunNotFound, match=f"no run with thread id '{thread}'"):
                act(thread)
        with pytest.raises(RunNotFound):
            fresh.advance(thread, {})

    report = make_canal().prune(timedelta(days=1))
    assert report["count"] == 0 and report["kept_unfinished"] == []
    assert sorted(report["unfinished_starts_removed"]) == ["no-begin", "no-state"]
    assert make_canal().store.lookup("no-state") is None
    assert [r["thread_id"] for r in make_canal().runs()] == ["real"]


def test_the_thread_id_of_a_start_that_never_finished_is_free(project, make_canal, recorder):
    leftovers(make_canal())
    for thread in ("no-state", "no-begin"):
        env = make_canal().start("create-project", thread_id=thread)
        assert env.status == "awaiting_input"
        env = make_canal().advance(thread, {"project_name": "p", "host": "p.example.com"})
        assert env.step.id == "summary"
        assert make_canal().store.lookup(thread).created_at > "2021"
