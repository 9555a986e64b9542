"""Rewind: take a run back to an earlier interactive step, to answer it again.

Bad data can pass a gate and still make a later tool fail; retrying sends the same bad
arguments again. A rewind moves the run back to the interactive step that supplied them
(the ``edit`` action of a failed step, or ``canal rewind THREAD STEP`` at any pause).

The run moves forward to a new checkpoint whose values are those it had when it paused at
that step: the gate data and results of that step and every later one are dropped, and
every later automated step starts a new attempt (a new call key, so the call journal never
replays an abandoned outcome). Nothing is deleted: the abandoned attempt stays in the
run's log (``history``) and in LangGraph's checkpoint history, with a ``rewind`` entry
naming what was abandoned.

Allowed only when no step between that step and now completed a call that is not read-only
(MCP ``readOnlyHint``; a read-back never changes anything): otherwise the run has changed
something a second pass would change again, and ``rewind_problem`` says which steps, and
which compensations an ``abort`` would run instead. A call that may or may not have
happened (a process died during it) counts as completed.

Pure functions of the spec and the values (no LangGraph): the graph's recovery node and the
facade's ``rewind`` share them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from canal.jsontypes import Checked
from canal.nodes.base import entry, replaced
from canal.nodes.spans import closed, opened
from canal.spec.models import WorkflowSpec
from canal.spec.templates import Reference, scan, walk_strings

ReadOnly = Callable[[str], bool]  # tool -> whether it only reads


def read_only_of(tools: Any) -> ReadOnly:
    """``tools.read_only`` when the client has one (canal's own do); else nothing counts as
    read-only, the safe answer."""
    return getattr(tools, "read_only", None) or (lambda _tool: False)


def source_step(spec: WorkflowSpec, step_id: str) -> str | None:
    """The interactive step whose data ``step_id``'s call uses, the latest one when several
    do (the default target of ``edit``), or None."""
    step = spec.step(step_id)
    texts = [text for _, text in walk_strings(step.automation.input_mapping)] \
        if step.automation else []
    used = {part.step for text in texts for part in scan(text)
            if isinstance(part, Reference) and part.namespace == "gate"}
    earlier = [s.id for s in spec.steps[:_index(spec, step_id)]
               if s.type == "interactive" and s.id in used]
    return earlier[-1] if earlier else None


def rewind_problem(spec: WorkflowSpec, values: Mapping[str, Any], target: str | None,
                   read_only: ReadOnly) -> str | None:
    """Why the run cannot go back to ``target`` now, or None when it can."""
    cursor = values.get("cursor")
    if target is None:
        return "no earlier interactive step supplies this step's data; name one with 'step'"
    known = {s.id: s for s in spec.steps}
    if target not in known or known[target].type != "interactive":
        choices = [s.id for s in spec.steps if s.type == "interactive"]
        return f"{target!r} is not an interactive step of this workflow (choose: " + \
            ", ".join(choices) + ")"
    if cursor is None or _index(spec, target) > _index(spec, cursor):
        return f"step {target!r} comes after the step the run is at ({cursor!r})"
    if target in (values.get("skipped") or {}):
        return f"step {target!r} was skipped; the run never asked it"
    changed = _changes(spec, values, target, read_only)
    if not changed:
        return None
    undo = [f"{s.id} ({s.compensate.tool})" for s in spec.steps
            if s.id in changed and s.compensate is not None]
    return ("cannot go back to " + repr(target) + ": after it, " + ", ".join(changed)
            + " completed a call that changed something, and answering again would repeat it"
            + ("; abort runs the compensations " + ", ".join(undo) if undo
               else "; abort stops the run (no step there declares a compensation)"))


def refused_edit(problem: str) -> Checked:
    """An ``edit`` answer refused, as a gate rejection of its ``action``."""
    return Checked(errors=[{"field": "action", "message": problem}])


def _changes(spec: WorkflowSpec, values: Mapping[str, Any], target: str,
             read_only: ReadOnly) -> list[str]:
    """The steps after ``target`` that completed a call that is not read-only."""
    result = values.get("result") or {}
    failure = values.get("failure") or {}
    out = []
    for step in spec.steps[_index(spec, target) + 1:]:
        if step.automation is None:
            continue
        maybe = failure.get("step") == step.id and failure.get("kind") == "in_flight"
        if (step.id in result or maybe) and not read_only(step.automation.tool):
            out.append(step.id)
    return out


def rewound(spec: WorkflowSpec, values: Mapping[str, Any], target: str,
            why: str) -> dict[str, Any]:
    """The update that takes the run back to ``target`` (``rewind_problem`` said it may)."""
    later = [s.id for s in spec.steps[_index(spec, target):]]
    gate = {k: v for k, v in (values.get("gate") or {}).items() if k not in later}
    result = values.get("result") or {}
    attempts = values.get("attempts") or {}
    cursor = values.get("cursor")
    abandoned = [s for s in later if s in (values.get("gate") or {}) or s in result]
    log = [entry("rewind", target, **{"from": cursor, "abandoned": abandoned, "why": why})]
    if cursor is not None:
        log.append(closed(spec, cursor, values, None, "abandoned"))
    return {
        "gate": replaced(gate), "status": "running", "cursor": target, "failure": None,
        "rejected": None, "verifying": None,
        "result": replaced({k: v for k, v in result.items() if k not in later}),
        "skipped": replaced({k: v for k, v in (values.get("skipped") or {}).items()
                             if k not in later}),
        "attempts": {s.id: attempts.get(s.id, 0) + 1 for s in spec.steps
                     if s.id in later and s.automation is not None},
        "log": log, "span": opened(target)}


def _index(spec: WorkflowSpec, step_id: str) -> int:
    return [s.id for s in spec.steps].index(step_id)

