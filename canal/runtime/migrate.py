"""When may a run move onto a new definition of its workflow?"""

from __future__ import annotations

from typing import Any

from canal.nodes.view import stopped_mid_step
from canal.spec.models import StepSpec, WorkflowSpec


def _shape(step: StepSpec) -> tuple[Any, ...]:
    return step.type, step.gate, step.automation


def migration_problems(old: WorkflowSpec, new: WorkflowSpec,
                       values: dict[str, Any]) -> list[str]:
    """Every reason the run at ``values`` cannot continue on ``new`` (empty: it can).

    The steps already done must be the same steps, in the same order, with the same type,
    gate and automation (their data and results stay valid, and so does every reference a
    later step makes to them, which the validator has checked against ``new``); the step the
    run waits at must come next in ``new`` with the same type. Step bodies may change.
    """
    cursor = values["cursor"]
    if stopped_mid_step(old, values):
        return [f"the run stopped in the middle of step {cursor!r}; retry, skip or abort it "
                "first"]
    done = [s.id for s in old.steps].index(cursor)
    reasons = []
    for position, step in enumerate(old.steps[:done]):
        if position >= len(new.steps) or new.steps[position].id != step.id:
            found = new.steps[position].id if position < len(new.steps) else "nothing"
            reasons.append(f"completed step {step.id!r} is no longer step {position + 1} "
                           f"(found {found})")
        elif _shape(new.steps[position]) != _shape(step):
            reasons.append(f"completed step {step.id!r} changed its type, gate or automation")
    if done >= len(new.steps) or new.steps[done].id != cursor:
        reasons.append(f"the current step {cursor!r} is not step {done + 1} of the new "
                       "definition")
    elif new.steps[done].type != old.step(cursor).type:
        reasons.append(f"the current step {cursor!r} changed its type")
    return reasons
