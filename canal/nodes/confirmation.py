"""Confirmation before a destructive call.

Every automated step has this node under its own name, in front of the node that calls the
tool, so the graph is the same whichever tools turn out destructive. It passes straight
through unless the step is in the run's ``confirm_steps`` (fixed when the run starts: the
step says ``confirm: true``, or its tool is marked ``destructiveHint: true``). Then it asks
once per attempt for ``{"confirm": true}``; ``false`` parks the run as failed with the
``action`` gate (``retry`` asks again). A step already confirmed for the current attempt
(a resend after a crash) passes straight through.

Passing straight through, the node makes the call itself (``call``, the node function of
``<id>.call``): nothing needs saving between the two, and a step that runs whole in one
node costs the run one LangGraph step and one checkpoint fewer. ``<id>.call`` runs as a node
of its own only after a confirmation, whose answer is saved before the call goes out. Either
way the call journal keys the call by step and attempt, so a node run again after a crash
replays the call's outcome rather than calling twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.types import Command

from canal.nodes.ask import ask, check_answer, reject
from canal.nodes.automated import failed
from canal.nodes.base import call_node, entry, is_abort
from canal.nodes.deps import Deps, thread_id
from canal.nodes.failure import Failure
from canal.nodes.gate import CONFIRM_GATE
from canal.nodes.keys import call_key
from canal.nodes.moves import go_abort
from canal.spec.models import StepSpec, WorkflowSpec


def confirmation(spec: WorkflowSpec, step: StepSpec, deps: Deps,
                 call: Callable[[dict[str, Any]], Command]) -> Callable[[dict[str, Any]],
                                                                         Command]:
    assert step.automation is not None
    tool = step.automation.tool

    def node(state: dict[str, Any]) -> Command:
        attempt = (state.get("attempts") or {}).get(step.id, 0)
        if (step.id not in (state.get("confirm_steps") or [])
                or (state.get("confirmed") or {}).get(step.id) == attempt):
            return call(state)
        value = ask(spec, state, deps)
        paused = {"pauses": 1}
        if is_abort(value):
            return go_abort(spec, step.id, state, added=paused)
        check = check_answer(CONFIRM_GATE, value, deps)
        if not check.accepted:
            return reject(step.id, step.id, check, span=paused)
        said = entry("confirm", step.id, confirm=check.data["confirm"], attempt=attempt)
        if check.data["confirm"] is True:
            return Command(goto=call_node(step.id), update={
                "confirmed": {step.id: attempt}, "rejected": None, "log": [said],
                "span": paused})
        key = call_key(thread_id(), step.id, attempt)
        return failed(Failure("declined", step.id, tool, key), [said], paused)

    node.__name__ = f"confirmation_{step.id}"
    return node
