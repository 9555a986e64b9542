"""Where a run goes next: ``when`` conditions decide which of the following steps run.

A node that finishes a step moves the run with ``onward``: it decides the condition of
each following step, in order, over the run's values including what the node itself just
stored, and goes to the first step whose condition holds; every step passed over is
recorded as skipped (a ``skip`` entry, ``skipped`` in the state). The decision is made by
the node that moves, so the latest checkpoint always names the step the run is really at.

A reference to a skipped step's values is absent (``canal.nodes.lookup``): an argument is
left out, text is empty, and a condition sees an absent value.

Pure functions of the spec and JSON-plain values (no LangGraph): ``canal plan`` decides the
same conditions, three-valued, without running anything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from canal.errors import TemplateError
from canal.nodes.base import entry, moved
from canal.nodes.lookup import SKIPPED_BY_CONDITION, run_lookup
from canal.nodes.sensitive import TextSealer
from canal.nodes.spans import closed, opened
from canal.spec.conditions import ABSENT, UNKNOWN, Clause, holds, parse_when
from canal.spec.models import StepSpec, WorkflowSpec
from canal.spec.templates import MISSING, Lookup, Pending, resolve, walk_strings


def decide(step: StepSpec, lookup: Lookup) -> bool | None:
    """Whether ``step`` runs: its ``when`` over ``lookup`` (True without one; None when a
    dry run's lookup cannot know yet)."""
    if step.when is None:
        return True
    condition, _ = parse_when(step.when)

    def read(test: Clause) -> Any:
        assert test.reference is not None
        try:
            value = lookup(test.reference)
        except TemplateError:  # the step has no such data: absent
            return ABSENT
        if isinstance(value, Pending):
            return UNKNOWN
        return ABSENT if value is MISSING else value

    return holds(condition, read, lambda operand: resolved_operand(operand, lookup))


def resolved_operand(operand: Any, lookup: Lookup) -> Any:
    """An operand (or expected value) with its references resolved: UNKNOWN when one is not
    produced yet, ABSENT when one does not resolve."""
    if not any("{{" in text for _, text in walk_strings(operand)):
        return operand
    pending: list[Pending] = []

    def look(ref: Any) -> Any:
        value = lookup(ref)
        if isinstance(value, Pending):
            pending.append(value)
        return value

    try:
        value = resolve(operand, look)
    except TemplateError:
        return ABSENT
    if pending:
        return UNKNOWN
    return ABSENT if value is MISSING else value


def destinations(spec: WorkflowSpec, after: str | None) -> list[str | None]:
    """Every step a run can move to after ``after`` (None: the start), in order; None is
    the end. The compiler declares these as the node's branches."""
    steps = spec.steps if after is None else spec.steps[_index(spec, after) + 1:]
    out: list[str | None] = []
    for step in steps:
        out.append(step.id)
        if step.when is None:
            return out
    return [*out, None]


def target(spec: WorkflowSpec, after: str | None,
           lookup: Lookup) -> tuple[str | None, list[tuple[str, bool | None]]]:
    """The step the run goes to after ``after`` and the decision of each step considered
    (a step decided None, in a dry run, is taken as running)."""
    decisions: list[tuple[str, bool | None]] = []
    for candidate in destinations(spec, after):
        if candidate is None:
            return None, decisions
        decision = decide(spec.step(candidate), lookup)
        decisions.append((candidate, decision))
        if decision is not False:
            return candidate, decisions
    raise AssertionError("unreachable")  # destinations ends with None or a plain step


def onward(spec: WorkflowSpec, step_id: str | None, state: Mapping[str, Any],
           update: dict[str, Any], sealer: TextSealer | None,
           outcome: str = "completed") -> tuple[str | None, dict[str, Any]]:
    """Finish ``step_id`` (None: the run's start) with ``update``; the step the run goes to
    (None: the end) and the whole update, with skipped steps recorded and spans closed."""
    values = _with(state, update)
    goto, decisions = target(spec, step_id, run_lookup(values, sealer))
    log = list(update.get("log") or [])
    if step_id is not None:
        log.append(closed(spec, step_id, values, update.get("span"), outcome))
    skipped = [step for step, decision in decisions if decision is False]
    for step in skipped:
        log.append(entry("skip", step, reason="when"))
        log.append(closed(spec, step, values, None, "skipped"))
    full = moved(goto, {**update, "log": log, "span": opened(goto)})
    if skipped:
        full["skipped"] = dict.fromkeys(skipped, SKIPPED_BY_CONDITION)
    return goto, full


def _with(state: Mapping[str, Any], update: Mapping[str, Any]) -> dict[str, Any]:
    """``state`` as it reads once ``update`` is applied (gate and result merged)."""
    from canal.nodes.base import ACCEPTED

    values = dict(state)
    gate = update.get("gate")
    if isinstance(gate, Mapping) and ACCEPTED in gate:
        values["gate"] = {**(state.get("gate") or {}), **gate[ACCEPTED]}
    for key in ("result", "skipped"):
        if key in update:
            values[key] = {**(state.get(key) or {}), **update[key]}
    return values


def _index(spec: WorkflowSpec, step_id: str) -> int:
    return [s.id for s in spec.steps].index(step_id)
