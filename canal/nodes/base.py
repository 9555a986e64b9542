"""What every node shares: the resume protocol, log entries and the move to the next step.

Every node returns a ``Command`` whose ``goto`` names the next node and whose update sets
``cursor`` to the step the run will be at. The latest checkpoint therefore always says where
a run stands, so read-only commands can answer without compiling the graph.

Resume values sent to an interrupted node are ``{"kind": "submit", "data": {...}}`` (data
already checked by the runtime against the gate) or ``{"kind": "abort"}``.
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Callable

from langgraph.graph import END
from langgraph.types import Command, interrupt

SUBMIT = "submit"
ABORT = "abort"
RECOVER_SUFFIX = ".recover"
COMPENSATE = "abort.compensate"  # not a step id: step ids have no '.'



def submit(data: dict[str, Any]) -> dict[str, Any]:
    return {"kind": SUBMIT, "data": data}


def abort_request() -> dict[str, Any]:
    return {"kind": ABORT}


CALL_SUFFIX = ".call"


def call_node(step_id: str) -> str:
    """The name of an automated step's calling node when a confirmation node stands in
    front of it under the step's own name."""
    return step_id + CALL_SUFFIX


def recovery_node(step_id: str) -> str:
    """The name of the node that parks a failed automated step."""
    return step_id + RECOVER_SUFFIX


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def entry(kind: str, step: str | None, **fields: Any) -> dict[str, Any]:
    """One line of a run's log."""
    return {"at": now(), "kind": kind, "step": step, **fields}


def go_to(next_id: str | None, update: dict[str, Any]) -> Command:
    """Move to ``next_id`` (or finish when it is None), applying ``update``."""
    status = "running" if next_id else "completed"
    return Command(goto=next_id or END,
                   update={**update, "cursor": next_id, "status": status, "failure": None})


def aborted(step_id: str) -> Command:
    """Abort at ``step_id``: the run is finished; compensations run next."""
    return Command(goto=COMPENSATE, update={"status": "aborted", "cursor": step_id,
                                            "compensating": True,
                                            "log": [entry("abort", step_id)]})


def is_abort(value: Any) -> bool:
    return isinstance(value, dict) and value.get("kind") == ABORT


def pause(step_id: str, step_type: str,
          on_submit: Callable[[dict[str, Any], dict[str, Any]], Command],
          ) -> Callable[[dict[str, Any]], Command]:
    """A node that interrupts once, then aborts or hands the submitted data (and the state)
    to ``on_submit``."""

    def node(state: dict[str, Any]) -> Command:
        # Nothing before interrupt(): on resume the node runs again from its first line.
        value = interrupt({"step": step_id, "type": step_type})
        if is_abort(value):
            return aborted(step_id)
        return on_submit(value.get("data") or {}, state)

    node.__name__ = f"{step_type}_{step_id}"
    return node
