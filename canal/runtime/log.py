"""What a run's checkpoints say beyond its values: its log, and writes a dead process left.

Each checkpoint's ``log`` channel holds the entries of the step that made it (see
``canal.graphs.state``). The run's log is those entries along the parent chain of its
latest checkpoint, oldest first: a branch left behind (a checkpoint copied to drop a dead
process's writes) is not on the chain, so nothing is counted twice.

A process killed after a node finished (its writes stored with ``put_writes``) but before
the next checkpoint leaves those writes pending on the latest checkpoint. LangGraph applies
them on the next ``invoke`` without running the node again, whatever the new input says:
a dead process's ``retry`` would beat a person's ``abort``. ``unsaved`` finds them, so
``current`` can describe them and the facade can drop them before it applies an answer.

Only the checkpointer is read, through the store (``Store.since``, ``Store.head``), which
reads SQLite's and PostgreSQL's tables without LangGraph.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def run_log(checkpoints: Iterable[Any], since: str | None = None) -> list[dict[str, Any]]:
    """The log entries of a run, oldest first, from its ``checkpoints`` (newest first, as
    ``Store.since`` gives them); with ``since`` (a checkpoint id on the chain), only those
    of the checkpoints after it."""
    chunks: list[list[dict[str, Any]]] = []
    wanted: str | None = None
    for found in checkpoints:  # newest first: the chain in one pass
        checkpoint_id = found.config["configurable"]["checkpoint_id"]
        if wanted is None and not chunks:
            wanted = checkpoint_id
        if checkpoint_id != wanted:
            continue
        if checkpoint_id == since:
            break
        chunks.append(list(found.checkpoint["channel_values"].get("log") or []))
        parent = found.parent_config
        wanted = parent["configurable"]["checkpoint_id"] if parent else None
        if wanted is None:
            break
    entries: list[dict[str, Any]] = []
    for chunk in reversed(chunks):
        if entries and chunk[:len(entries)] == entries:  # a run saved before the log was
            chunk = chunk[len(entries):]                 # per step holds it whole
        entries += chunk
    return entries


def transitions(entries: list[dict[str, Any]]) -> tuple[list[dict[str, Any]],
                                                        list[dict[str, Any]]]:
    """A run's log split into its transitions and its step spans (``canal.nodes.spans``)."""
    return ([e for e in entries if e.get("kind") != "span"],
            [e for e in entries if e.get("kind") == "span"])


def head_id(store: Any, thread_id: str) -> str | None:
    """The id of the run's latest checkpoint (None before the first one)."""
    found = store.head(thread_id)
    return found.config["configurable"]["checkpoint_id"] if found else None


def unsaved(found: Any) -> dict[str, Any] | None:
    """The writes of a node that finished in a process that died before the next
    checkpoint (``found``: the latest ``CheckpointTuple``), or None.

    ``{"data": the resume value that process was given (None if none), "entries": the
    log entries the node wrote, "status" and "cursor": where it would have moved the run}``.
    """
    finished: dict[str, dict[str, Any]] = {}
    answers: dict[bool, Any] = {}  # given with the input (True) / recorded by the task
    for task_id, channel, value in (found.pending_writes or []) if found else []:
        if channel == "__resume__":
            from_input = task_id == NULL_TASK_ID
            answers[from_input] = value if from_input else (value or [None])[-1]
        elif task_id != NULL_TASK_ID and not channel.startswith("__"):  # a node's own
            writes = finished.setdefault(task_id, {"entries": []})
            if channel == "log":
                writes["entries"] += [e for e in (value if isinstance(value, list) else [value])
                                      if e.get("kind") != "span"]
            elif channel in ("status", "cursor"):
                writes[channel] = value
    if not finished:
        return None
    return {"data": answers.get(True, answers.get(False)), **next(iter(finished.values()))}


NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"  # LangGraph's task id for input writes
