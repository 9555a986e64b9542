"""history and prune, on every checkpointer."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from canal import RunNotFound, UsageError
from canal.runtime.retention import parse_age
from tests.conftest import project_steps, write_workflow

VALID = {"project_name": "p", "host": "p.example.com"}
LATER = datetime.now(timezone.utc) + timedelta(days=2)


@pytest.fixture
def project(workflows):
    return write_workflow(workflows, "create-project", project_steps())


def test_a_checkpoint_holds_only_its_own_steps_log(project, make_canal, recorder):
    """Retrying a failing step must not copy the growing log into every checkpoint."""
    recorder.fail.add("create_role")
    canal = make_canal()
    canal.start("create-project", thread_id="t")
    canal.advance("t", VALID)
    sizes = []
    for _ in range(30):
        canal.advance("t", {"action": "retry"})
        sizes.append(len(repr(canal.values("t"))))
    assert sizes[-1] == sizes[9]  # the same size after 10 retries and after 30
    assert len(canal.values("t")["log"]) <= 2
    kinds = [e["kind"] for e in canal.history("t")["entries"]]
    assert kinds.count("action") == 30 and kinds.count("tool") == 32


def test_history_shows_every_transition(project, make_canal, recorder):
    recorder.fail.add("create_role")
    canal = make_canal()
    canal.start("create-project", thread_id="t")
    canal.advance("t", {**VALID, "junk": 1})
    recorder.fail.clear()
    make_canal().advance("t", {"action": "retry"})
    make_canal().advance("t")
    history = make_canal().history("t")
    assert history["run_status"] == "completed" and history["workflow"] == "create-project"
    entries = history["entries"]
    assert [(e["kind"], e["step"]) for e in entries] == [
        ("start", None), ("submit", "collect-project-info"), ("tool", "create-project"),
        ("tool", "create-role"), ("action", "create-role"), ("tool", "create-role"),
        ("acknowledge", "summary")]
    assert entries[0]["digest"].startswith("sha256:")
    assert entries[1]["data"] == {**VALID, "admins": ["root"], "quota": 10}
    assert entries[2]["arguments"]["name"] == "p" and entries[2]["ok"] is True
    assert entries[3]["ok"] is False and entries[3]["error"].endswith("role backend down")
    assert (entries[3]["attempt"], entries[5]["attempt"]) == (0, 1)
    assert entries[5]["key"] == "t:create-role:1"
    assert entries[5]["result"] == {"role_id": "role-42"}
    assert all(datetime.fromisoformat(e["at"]) for e in entries)


def test_prune_removes_old_finished_runs_and_never_a_waiting_one(project, make_canal):
    canal = make_canal()
    canal.start("create-project", thread_id="done")
    canal.advance("done", VALID)
    canal.advance("done")
    canal.start("create-project", thread_id="gone")
    canal.abort("gone")
    canal.start("create-project", thread_id="waiting")

    assert make_canal().prune(timedelta(days=1))["count"] == 0  # nothing is old yet
    report = make_canal().prune(timedelta(days=1), now=LATER)
    assert sorted(r["thread_id"] for r in report["removed"]) == ["done", "gone"]
    assert report["checkpoints_removed"] > 4
    assert report["kept_unfinished"] == ["waiting"]
    assert report["definitions_removed"] == 0, "the waiting run still uses the definition"
    for thread in ("done", "gone"):
        with pytest.raises(RunNotFound):
            make_canal().current(thread)
    assert make_canal().current("waiting").status == "awaiting_input"
    assert [r["thread_id"] for r in make_canal().runs()] == ["waiting"]

    everything = make_canal().prune(timedelta(days=1), include_waiting=True, now=LATER)
    assert [r["thread_id"] for r in everything["removed"]] == ["waiting"]
    assert everything["definitions_removed"] == 1
    assert make_canal().runs() == []


def test_prune_leaves_a_run_another_process_holds(project, make_canal):
    canal = make_canal()
    canal.start("create-project", thread_id="busy")
    canal.abort("busy")
    with canal.store.lock("busy"):
        report = make_canal().prune(timedelta(seconds=1), now=LATER)
    assert report["count"] == 0 and report["kept_unfinished"] == ["busy"]
    assert make_canal().current("busy").status == "aborted"


@pytest.mark.parametrize("text, expected", [("90s", timedelta(seconds=90)),
                                            ("15m", timedelta(minutes=15)),
                                            ("12h", timedelta(hours=12)),
                                            ("30d", timedelta(days=30)), ("2w", timedelta(weeks=2))])
def test_ages(text, expected):
    assert parse_age(text) == expected


@pytest.mark.parametrize("text", ["", "30", "d", "-1d", "1y", "1.5h", "²d", "٣d", "３h"])
def test_bad_ages(text):
    with pytest.raises(UsageError, match="is not a number with a unit"):
        parse_age(text)


@pytest.mark.parametrize("kind", ["saver", "sqlite"])
def test_history_reads_a_run_saved_when_each_checkpoint_held_the_whole_log(kind, tmp_path):
    """Through a saver object (read by the saver) and SQLite (read from its tables)."""
    from langgraph.checkpoint.base import empty_checkpoint
    from langgraph.checkpoint.memory import InMemorySaver

    from canal.checkpoints import open_store
    from canal.runtime.log import run_log

    if kind == "saver":
        store = open_store(InMemorySaver(), home=tmp_path)
    else:
        store = open_store(f"sqlite:///{tmp_path / 'state.db'}")
    saver = store.saver()
    config = {"configurable": {"thread_id": "old", "checkpoint_ns": ""}}
    logs = [[{"kind": "start"}], [{"kind": "start"}, {"kind": "submit"}],
            [{"kind": "start"}, {"kind": "submit"}, {"kind": "tool"}]]
    for number, log in enumerate(logs):
        checkpoint = empty_checkpoint()
        checkpoint["channel_values"] = {"log": log}
        checkpoint["channel_versions"] = {"log": number + 1}
        config = saver.put(config, checkpoint, {"step": number}, {"log": number + 1})
    assert [e["kind"] for e in run_log(store.since("old", None))] == ["start", "submit", "tool"]
