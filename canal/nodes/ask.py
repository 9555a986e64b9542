"""The one way a node pauses and checks the answer it is given.

``ask`` raises the interrupt: its value is the run's view (``canal.nodes.view.payload``)
and its ``response_schema`` the gate as JSON Schema. Tool connections are closed first: a
pause may last days. ``check_answer`` runs the gate check, the only one canal has, on the
resume value; a rejection loops back to the same node (``reject``), which pauses again
with the errors. Nothing of the rejected data is stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.types import Command, interrupt

from canal.jsontypes import Checked
from canal.nodes.base import answer_data
from canal.nodes.deps import Deps
from canal.nodes.gate import check_gate
from canal.nodes.sensitive import open_value
from canal.nodes.view import payload, response_schema, view_of
from canal.spec.models import FieldSpec, WorkflowSpec


def ask(spec: WorkflowSpec, state: Mapping[str, Any], deps: Deps) -> Any:
    """Pause the run where it stands; return the answer it is resumed with."""
    deps.tools.close()
    view = view_of(spec, state, deps.sealer)
    rejected = state.get("rejected")
    if (rejected or {}).get("step") != state.get("cursor"):
        rejected = None
    return interrupt(payload(view, rejected), response_schema=response_schema(view))


def check_answer(gate: Mapping[str, FieldSpec], value: Any, deps: Deps) -> Checked:
    """``value`` (a resume value) checked against ``gate``; sealed values are opened first.

    A step with no gate fields takes any acknowledgement (``True``, ``{"ack": true}``...).
    """
    data = answer_data(value)
    if not gate and not isinstance(data, Mapping):
        data = {}
    if isinstance(data, Mapping) and any(f.sensitive for f in gate.values()):
        data = open_value(data, deps.sealer)
    return check_gate(gate, data)


def reject(node: str, step_id: str, check: Checked, **update: Any) -> Command:
    """Loop back to ``node``, which pauses again showing what was wrong."""
    return Command(goto=node, update={**update, "rejected": {
        "step": step_id, "errors": check.errors, "missing": check.missing,
        "dropped": check.dropped}})
