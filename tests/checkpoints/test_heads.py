"""A run's head read from the checkpointer's tables (``canal.checkpoints.heads``) is the very
head LangGraph's saver reads, in every state a run passes through, sealed or not; what the
tables cannot give is read by the saver."""

from __future__ import annotations

import datetime
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from canal import Canal
from canal.checkpoints import open_store
from canal.checkpoints.heads import Foreign, Unreadable
from canal.crypto import Sealer
from tests.conftest import project_steps, write_workflow

VALID = {"project_name": "alpha", "host": "alpha.example.com"}


def same_head(store: Any, thread_id: str) -> Any:
    """The head the tables give, checked against the saver's; the tables' head."""
    fast = store.heads.head(thread_id)
    slow = store.saver().get_tuple({"configurable": {"thread_id": thread_id}})
    assert fast.checkpoint == slow.checkpoint
    assert (fast.config, fast.parent_config) == (slow.config, slow.parent_config)
    assert len(fast.pending_writes) == len(slow.pending_writes)
    for (task, channel, value), (slow_task, slow_channel, slow_value) in zip(
            fast.pending_writes, slow.pending_writes, strict=True):
        assert (task, channel) == (slow_task, slow_channel)
        assert opaque(value) == opaque(slow_value)
    return fast


def opaque(value: Any) -> Any:
    """``value`` with LangGraph's objects (an ``Interrupt``) and ``Foreign`` as one marker."""
    if isinstance(value, Foreign) or type(value).__module__.startswith("langgraph"):
        return "<object>"
    if isinstance(value, list):
        return [opaque(v) for v in value]
    if isinstance(value, dict):
        return {k: opaque(v) for k, v in value.items()}
    return value


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path,
        postgres_schema_url: Callable[[], str]) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'state.db'}"
    return postgres_schema_url()


def test_every_state_of_a_run_reads_as_the_saver_reads_it(url, tmp_path, recorder):
    write_workflow(tmp_path / "workflows", "create-project", project_steps())
    canal = Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
                  checkpointer=url, tools=recorder.client())
    store = canal.store
    heads = []
    thread = canal.start("create-project").thread_id
    heads.append(same_head(store, thread))  # paused at the gate: an interrupt is pending
    assert ["<object>"] in [opaque(v) for _, c, v in heads[-1].pending_writes
                            if c == "__interrupt__"]
    assert canal.advance(thread, {"host": "x"}).status == "rejected"
    heads.append(same_head(store, thread))
    recorder.fail.add("create_role")
    assert canal.advance(thread, VALID).status == "failed"
    heads.append(same_head(store, thread))
    recorder.fail.clear()
    assert canal.advance(thread, {"action": "retry"}).status == "awaiting_input"
    heads.append(same_head(store, thread))
    assert canal.advance(thread, {}).status == "completed"
    heads.append(same_head(store, thread))
    assert len({h.config["configurable"]["checkpoint_id"] for h in heads}) >= 4
    assert heads[-1].checkpoint["channel_values"]["status"] == "completed"
    listed = list(store.saver().list({"configurable": {"thread_id": thread}}))
    every = store.heads.since(thread, None)
    assert [(h.config, h.parent_config, h.checkpoint) for h in every] == [
        (t.config, t.parent_config, t.checkpoint) for t in listed]
    after = heads[1].config["configurable"]["checkpoint_id"]
    newer = [h.config for h in every].index(heads[1].config)  # newest first
    assert newer > 0 and store.heads.since(thread, after) == every[:newer]
    # A node's writes left pending (its process died before the next checkpoint).
    store.saver().put_writes(heads[-1].config, [("log", [{"kind": "step", "n": 1}]),
                                                ("status", "running")], "task-1")
    assert same_head(store, thread).pending_writes[-2:] == [
        ("task-1", "log", [{"kind": "step", "n": 1}]), ("task-1", "status", "running")]
    assert canal.current(thread).unsaved["status"] == "running"
    canal.close()


def test_the_tables_hold_sealed_state_only(tmp_path):
    """The default store seals: the bytes in the file are not msgpack of the state."""
    store = open_store(f"sqlite:///{tmp_path / 'state.db'}", Sealer(tmp_path / "home"))
    saver = store.saver()
    saver.put(_config("t"), _checkpoint({"workflow": "w", "secret": "hunter2"}), {}, {})
    assert b"hunter2" not in (tmp_path / "state.db").read_bytes()
    assert store.heads.head("t").checkpoint["channel_values"]["secret"] == "hunter2"
    store.close()


def test_unsealed_state_reads_too(tmp_path):
    store = open_store(f"sqlite:///{tmp_path / 'state.db'}")
    store.saver().put(_config("t"), _checkpoint({"workflow": "w", "n": 2 ** 40}), {}, {})
    assert same_head(store, "t").checkpoint["channel_values"] == {"workflow": "w", "n": 2 ** 40}
    store.close()


def test_a_value_only_langgraph_reads_goes_through_the_saver(url, tmp_path):
    """A channel holding an object LangGraph packs (here a datetime) is not guessed at: the
    store hands back the saver's head."""
    store = open_store(url, Sealer(tmp_path / "home"))
    when = datetime.datetime(2026, 1, 2, 3, 4, 5)
    store.saver().put(_config("t"), _checkpoint({"workflow": "w", "at": when}), {},
                      {"workflow": "1", "at": "1"})
    with pytest.raises(Unreadable):
        store.heads.head("t")
    assert store.head("t").checkpoint["channel_values"]["at"] == when
    store.close()


def test_no_checkpoint_is_no_head(url, tmp_path):
    store = open_store(url, Sealer(tmp_path / "home"))
    assert store.head("nobody") is None  # before the saver made its tables
    assert store.heads.head("nobody") is None
    store.close()


def test_sealed_state_with_another_key_is_refused_not_misread(tmp_path, monkeypatch):
    url = f"sqlite:///{tmp_path / 'state.db'}"
    store = open_store(url, Sealer(tmp_path / "home"))
    store.saver().put(_config("t"), _checkpoint({"workflow": "w"}), {}, {})
    store.close()
    from canal.errors import ConfigError

    other = open_store(url, Sealer(tmp_path / "other-home"))
    monkeypatch.setenv("CANAL_ENCRYPTION_KEY", "A" * 43 + "=")
    with pytest.raises(ConfigError, match="cannot decrypt the saved state"):
        other.head("t")
    other.close()


def _config(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}


def _checkpoint(values: dict[str, Any]) -> dict[str, Any]:
    from langgraph.checkpoint.base import empty_checkpoint

    made = empty_checkpoint()
    made["channel_values"] = values
    made["channel_versions"] = dict.fromkeys(values, "1")
    return made
