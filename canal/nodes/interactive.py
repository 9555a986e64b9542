"""Interactive steps: pause until the answer passes the step's gate, then store it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.types import Command

from canal.nodes.ask import ask, check_answer, reject
from canal.nodes.base import accept, entry, is_abort
from canal.nodes.deps import Deps
from canal.nodes.moves import go_abort, go_on
from canal.nodes.sensitive import seal_fields
from canal.spec.models import StepSpec, WorkflowSpec


def interactive(spec: WorkflowSpec, step: StepSpec,
                deps: Deps) -> Callable[[dict[str, Any]], Command]:
    """Take the step's pre-answer if the run was started with one, else pause once; store
    the data that passes the gate (sensitive values sealed) under the step id.

    A step without a gate schema takes any acknowledgement and stores ``{}``.
    """

    def node(state: dict[str, Any]) -> Command:
        # Nothing with a side effect before ask(): on resume the node runs from the top.
        prefilled = (state.get("prefill") or {}).get(step.id)
        consumed: dict[str, Any] = {}
        if prefilled is not None:
            value, consumed = prefilled, {"prefill": {step.id: None}}
        else:
            value, consumed = ask(spec, state, deps), {"span": {"pauses": 1}}
        if is_abort(value):
            return go_abort(spec, step.id, state, added=consumed.get("span"))
        check = check_answer(step.gate, value, deps)
        if not check.accepted:
            return reject(step.id, step.id, check, **consumed)
        data = seal_fields(step.gate, check.data, deps.sealer)
        done = entry("submit", step.id, data=data,
                     **({"prefilled": True} if prefilled is not None else {}))
        return go_on(spec, step.id, state, {
            **consumed, "gate": accept({step.id: data}), "log": [done]}, deps)

    node.__name__ = f"interactive_{step.id}"
    return node
