"""What every node shares: node names, the answer protocol, log entries, moves.

Every node returns a ``Command`` whose ``goto`` names the next node and whose update sets
``cursor`` to the step the run will be at. The latest checkpoint therefore always says where
a run stands, so read-only commands can answer without compiling the graph.

The answer protocol (DESIGN.md §8): ``Command(resume=data)`` answers the pending step with
``data``, checked against that step's gate by the node itself. ``ABORT`` aborts the run from
any pause. ``True`` means "no data" (an acknowledgement): LangGraph drops a falsy resume
value such as ``{}``, so an empty submission travels as ``True``.

This module imports no LangGraph (read-only commands use it).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

ABORT: dict[str, Any] = {"$abort": True}
ACK = True

ACCEPTED = "$accepted"            # gate writes of nodes: see canal.graphs.state.merge_gate
PREFILL = "$prefill"              # a client's gate input, parked for run.begin
REPLACE = "$replace"              # a node's write that replaces a per-step map (a rewind)

BEGIN = "run.begin"              # not a step id: step ids have no '.'
COMPENSATE = "abort.compensate"
CALL_SUFFIX = ".call"
RECOVER_SUFFIX = ".recover"
VERIFY_SUFFIX = ".verify"


def accept(data: dict[str, Any]) -> dict[str, Any]:
    """A node's write of accepted gate data (step id -> data)."""
    return {ACCEPTED: data}


def replaced(data: dict[str, Any]) -> dict[str, Any]:
    """A node's write that replaces a per-step map (``gate``, ``result``...) as a whole."""
    return {REPLACE: data}


def is_abort(value: Any) -> bool:
    return isinstance(value, dict) and value.get("$abort") is True


def answer_data(value: Any) -> Any:
    """The submitted data in a resume value (``True``/``None`` are an empty submission)."""
    return {} if value is True or value is None else value


def resume_value(data: Any) -> Any:
    """What to send as ``Command(resume=...)`` for ``data`` (never a falsy value)."""
    return data if data else ACK


def call_node(step_id: str) -> str:
    """The node of an automated step that calls its tool (the step's own name is its
    confirmation node, which passes straight through unless the step asks to confirm)."""
    return step_id + CALL_SUFFIX


def recovery_node(step_id: str) -> str:
    """The node that parks a failed automated step."""
    return step_id + RECOVER_SUFFIX


def verify_node(step_id: str) -> str:
    """The node that reads back what an automated step's call did (its ``verify``)."""
    return step_id + VERIFY_SUFFIX


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def entry(kind: str, step: str | None, **fields: Any) -> dict[str, Any]:
    """One line of a run's log."""
    return {"at": now(), "kind": kind, "step": step, **fields}


def moved(next_id: str | None, update: dict[str, Any]) -> dict[str, Any]:
    """The update that moves the run to ``next_id`` (finished when None)."""
    status = "running" if next_id else "completed"
    return {**update, "cursor": next_id, "status": status, "failure": None, "rejected": None,
            "verifying": None}


def aborted_update(step_id: str | None) -> dict[str, Any]:
    """The update that aborts the run at ``step_id``; compensations run next."""
    return {"status": "aborted", "cursor": step_id, "compensating": True, "rejected": None,
            "log": [entry("abort", step_id)]}
