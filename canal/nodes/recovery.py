"""``<id>.recover``: where a failed automated step waits for ``{"action": ...}``.

``retry`` starts a new attempt (a new call key) unless the failure was a call that may or
may not have happened: then the same call is sent again under the same key, so a backend
that deduplicates by key can tell. ``skip`` moves on (the step's result stays as it is:
none, or what a call whose read-back failed returned). ``abort`` stops the run. After a
failed read-back (``postcondition_failed``) ``recheck`` also reads back again without
calling the tool. ``edit`` (with an optional ``step``) takes the run back to the
interactive step that supplied the data, to answer it again (``canal.nodes.rewind``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.types import Command

from canal.nodes.ask import ask, check_answer, reject
from canal.nodes.base import entry, is_abort, recovery_node, verify_node
from canal.nodes.deps import Deps
from canal.nodes.failure import Failure
from canal.nodes.lookup import SKIPPED_BY_ACTION
from canal.nodes.moves import go_abort, go_on
from canal.nodes.rewind import read_only_of, refused_edit, rewind_problem, rewound, source_step
from canal.nodes.view import gate_of
from canal.spec.models import StepSpec, WorkflowSpec


def recovery(spec: WorkflowSpec, step: StepSpec,
             deps: Deps) -> Callable[[dict[str, Any]], Command]:
    here = recovery_node(step.id)
    paused = {"pauses": 1}

    def node(state: dict[str, Any]) -> Command:
        value = ask(spec, state, deps)
        if is_abort(value):
            return go_abort(spec, step.id, state, added=paused)
        check = check_answer(gate_of(spec, {**state, "cursor": step.id}), value, deps)
        if not check.accepted:
            return reject(here, step.id, check, span=paused)
        action = check.data["action"]
        log = [entry("action", step.id, action=action)]
        if action == "abort":
            return go_abort(spec, step.id, state, log, paused)
        if action == "skip":
            return go_on(spec, step.id, state, {
                "log": log, "span": paused, "skipped": {step.id: SKIPPED_BY_ACTION}}, deps,
                outcome="skipped")
        failure = Failure.from_state(state.get("failure") or {"step": step.id})
        update: dict[str, Any] = {"status": "running", "cursor": step.id, "failure": None,
                                  "rejected": None, "log": log, "span": paused}
        if action == "edit":
            target = check.data.get("step") or source_step(spec, step.id)
            problem = rewind_problem(spec, state, target, read_only_of(deps.tools))
            if problem is not None:
                return reject(here, step.id, refused_edit(problem), span=paused)
            assert target is not None  # rewind_problem refuses None
            back = rewound(spec, state, target, f"edit after {step.id} failed")
            return Command(goto=target, update={**back, "log": log + back["log"]})
        if action == "recheck":
            rechecks = (state.get("rechecks") or {}).get(step.id, 0) + 1
            return Command(goto=verify_node(step.id), update={
                **update, "rechecks": {step.id: rechecks}, "verifying": step.id})
        if failure.resend_same_key:
            update["approved"] = {step.id: failure.key}
        else:
            update["attempts"] = {step.id: (state.get("attempts") or {}).get(step.id, 0) + 1}
        return Command(goto=step.id, update=update)

    node.__name__ = f"recovery_{step.id}"
    return node
