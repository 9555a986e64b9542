"""A run's log, read back from its checkpoints.

Each checkpoint's ``log`` channel holds the entries of the step that made it (see
``canal.graphs.state``). The run's log is those entries along the parent chain of its
latest checkpoint, oldest first: a branch left behind (a checkpoint copied to drop a dead
process's writes) is not on the chain, so nothing is counted twice. Only the checkpointer
is read; LangGraph's graph engine is not imported.
"""

from __future__ import annotations

from typing import Any


def run_log(saver: Any, thread_id: str, since: str | None = None) -> list[dict[str, Any]]:
    """The log entries of ``thread_id``, oldest first; with ``since`` (a checkpoint id on
    the chain), only those of the checkpoints after it."""
    config = {"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}}
    chunks: list[list[dict[str, Any]]] = []
    wanted: str | None = None
    for found in saver.list(config):  # newest first, so the chain is read in one pass
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
    return [entry for chunk in reversed(chunks) for entry in chunk]


def head_id(saver: Any, thread_id: str) -> str | None:
    """The id of the run's latest checkpoint (None before the first one)."""
    found = saver.get_tuple({"configurable": {"thread_id": thread_id, "checkpoint_ns": ""}})
    return found.config["configurable"]["checkpoint_id"] if found else None
