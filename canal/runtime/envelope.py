"""The result envelope every runtime call returns (DESIGN.md §4).

It is built from the run's view (``canal.nodes.view``), the same one the graph's interrupts
carry, so the CLI and a LangGraph client always see the same step. Only the latest
checkpoint's values and the workflow spec are needed: read-only calls (``current``,
``runs``) build envelopes without compiling a graph.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from canal.nodes.failure import STOPPED
from canal.nodes.masking import Masker
from canal.nodes.sensitive import TextSealer
from canal.nodes.view import RunView, StepView, error_item, stopped_mid_step, view_of
from canal.spec.models import FieldSpec, WorkflowSpec


@dataclass
class Envelope:
    """What a call did and where the run stands now."""

    thread_id: str
    workflow: str
    status: str
    step: StepView | None = None
    executed: list[dict[str, Any]] = field(default_factory=list)
    errors: list[dict[str, Any]] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    completed: list[dict[str, Any]] | None = None
    definition: dict[str, Any] | None = None
    unsaved: dict[str, Any] | None = None
    next: dict[str, Any] | None = None
    masker: Masker = field(default_factory=Masker, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The JSON form, with the run's sensitive values masked (``canal.nodes.masking``).
        (The attributes keep what the run holds, for code in this process.)"""
        return self.masker.naming(self.thread_id).document(self._plain())

    def __repr__(self) -> str:
        return f"Envelope({self.to_json()!r})"

    def _plain(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "thread_id": self.thread_id, "workflow": self.workflow, "status": self.status,
            "step": self.step.to_json() if self.step else None,
            "executed": self.executed, "errors": [error_item(e) for e in self.errors],
            "missing": self.missing, "dropped": self.dropped, "next": self.next,
        }
        if self.completed is not None:
            data["completed"] = self.completed
        if self.definition is not None:
            data["definition"] = self.definition
        if self.unsaved is not None:
            data["unsaved"] = self.unsaved
        return data


def envelope_of(thread_id: str, spec: WorkflowSpec, values: Mapping[str, Any],
                sealer: TextSealer | None, executed: list[dict[str, Any]] | None = None,
                stopped: str = STOPPED["unknown"]) -> Envelope:
    """The envelope of a run whose latest state is ``values``."""
    view = view_of(spec, values, sealer, stopped)
    return Envelope(thread_id, spec.name, view.status, step=view.step,
                    executed=list(executed or []), errors=view.errors, masker=view.masker,
                    next=next_of(thread_id, spec, values, view))


def next_of(thread_id: str, spec: WorkflowSpec, values: Mapping[str, Any],
            view: RunView) -> dict[str, Any] | None:
    """What an agent that knows nothing else calls next (``next``): the command, the run,
    the step, and the data it takes, one short description per field (``describe``).
    None when the run is finished."""
    if view.status == "aborted":
        if values.get("compensating"):
            return {"command": "recover", "thread_id": thread_id,
                    "hint": "the compensations were cut short: recover finishes them"}
        return None
    if view.step is None:
        return None
    answer = {"command": "advance", "thread_id": thread_id, "step": view.step.id,
              "data": {name: describe(f) for name, f in view.gate.items()}}
    if view.status == "failed":
        hint = "answer with one action in data (--gate-data '{\"action\": \"...\"}')"
        if stopped_mid_step(spec, values):
            return {**answer, "hint": hint + ", or recover to go on as far as is safe",
                    "or": {"command": "recover", "thread_id": thread_id}}
        return {**answer, "hint": hint}
    if view.step.call is not None:
        return {**answer, "hint": "show the call in step.call to the user; confirm true to "
                                  "make it, false to stop"}
    if not view.gate:
        return {**answer, "hint": "no data: acknowledge with an empty submission"
                + (" once the user has the message" if view.step.type == "notification"
                   else "")}
    return {**answer, "hint": "submit the fields in data; follow step.instructions"}


def describe(spec: FieldSpec) -> str:
    """One field of ``next.data`` in a few words: ``integer 1..100, optional, default 10``,
    ``string, required, e.g. "billing.example.com", matching ^[a-z.]+$``."""
    kind = f"one of {json.dumps(list(spec.enum), allow_nan=False)}" if spec.enum else spec.type
    parts = [kind]
    if spec.min is not None or spec.max is not None:
        low = "" if spec.min is None else spec.min
        high = "" if spec.max is None else spec.max
        unit = {"string": " characters", "array": " items"}.get(spec.type, "")
        parts[0] += f" {low}..{high}{unit}"
    parts.append("required" if spec.required else "optional")
    if spec.default is not None and not spec.sensitive:
        parts.append(f"default {json.dumps(spec.default, allow_nan=False)}")
    if spec.example is not None and not spec.sensitive:
        parts.append(f"e.g. {json.dumps(spec.example, allow_nan=False)}")
    if spec.pattern:
        parts.append(f"matching {spec.pattern}")
    if spec.sensitive:
        parts.append("sensitive")
    return ", ".join(parts)


def completed_steps(spec: WorkflowSpec, values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What the run has done so far, step by step, for a session that knows nothing."""
    done: list[dict[str, Any]] = []
    gate, result = values.get("gate") or {}, values.get("result") or {}
    skipped = values.get("skipped") or {}
    for step in spec.steps:
        if step.id == values.get("cursor"):
            break
        item: dict[str, Any] = {"step": step.id, "type": step.type}
        if skipped.get(step.id) == "when":  # its condition did not hold: it never ran
            done.append({**item, "skipped": True, "reason": "when"})
            continue
        if step.type == "interactive":
            item["data"] = gate.get(step.id, {})
        elif step.type == "automated":
            item["result"] = result.get(step.id)
            if step.id not in result:
                item["skipped"] = True
        done.append(item)
    return done


def missing_fields(gate: Mapping[str, FieldSpec]) -> list[str]:
    return [name for name, f in gate.items() if f.required]
