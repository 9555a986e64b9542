"""How a run's state reads to an agent: the step it waits at, the gate that applies, the
call awaiting confirmation, the failure it is parked with.

One function, ``view_of``, serves both the interrupt a node raises (DESIGN.md §8) and the
envelope the facade returns (§4), so the two never disagree. It needs only the latest
state and the spec, and imports no LangGraph: read-only commands build views too.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from canal.errors import TemplateError
from canal.nodes.failure import STOPPED
from canal.nodes.gate import ACTION_GATE, CONFIRM_GATE, VERIFY_ACTION_GATE, json_schema
from canal.nodes.lookup import run_lookup
from canal.nodes.masking import Masker
from canal.nodes.sensitive import TextSealer, masker_of
from canal.spec.models import FieldSpec, StepSpec, WorkflowSpec
from canal.spec.templates import render_lenient, resolve


@dataclass(frozen=True)
class StepView:
    """The one step an agent needs to see."""

    id: str
    type: str
    instructions: str
    gate: dict[str, Any]
    title: str | None = None
    call: dict[str, Any] | None = None   # the call awaiting confirmation: tool, arguments
    references: list[dict[str, str]] | None = None  # the step's files: [{"name", "text"}]

    def to_json(self) -> dict[str, Any]:
        data = {"id": self.id, "type": self.type, "title": self.title,
                "instructions": self.instructions, "gate": self.gate, "call": self.call,
                "references": self.references}
        return {k: v for k, v in data.items() if v is not None}


@dataclass
class RunView:
    """Where a run stands: ``status`` (running runs read ``awaiting_input`` or ``failed``),
    the step with its gate, and errors (a failure, or failed compensations)."""

    status: str
    step: StepView | None = None
    gate: dict[str, FieldSpec] = field(default_factory=dict)
    errors: list[dict[str, Any]] = field(default_factory=list)
    masker: Masker = field(default_factory=Masker)


def awaiting_confirmation(values: Mapping[str, Any]) -> bool:
    """The run waits for a person to confirm the call of the step it is at."""
    cursor = values.get("cursor")
    attempt = (values.get("attempts") or {}).get(cursor, 0)
    return (values.get("status") == "running" and cursor in (values.get("confirm_steps") or [])
            and (values.get("confirmed") or {}).get(cursor) != attempt)


def stopped_mid_step(spec: WorkflowSpec, values: Mapping[str, Any]) -> bool:
    """The latest checkpoint sits before an automated step that never finished (and is not
    simply waiting for its confirmation): the process died during that step."""
    return (values.get("status") == "running" and values.get("cursor") is not None
            and spec.step(values["cursor"]).type == "automated"
            and not awaiting_confirmation(values))


def gate_of(spec: WorkflowSpec, values: Mapping[str, Any]) -> dict[str, FieldSpec]:
    """The gate a submission to this run must pass right now."""
    step = spec.step(values["cursor"])
    if awaiting_confirmation(values):
        return CONFIRM_GATE
    if values.get("status") == "failed" or step.type == "automated":
        # A failed read-back, or a process that died during one, may also recheck.
        failure = values.get("failure") or {}
        reading_back = (failure.get("kind") == "postcondition" if values.get("status") == "failed"
                        else values.get("verifying") == step.id)
        return VERIFY_ACTION_GATE if reading_back else ACTION_GATE
    return dict(step.gate) if step.type == "interactive" else {}


def view_of(spec: WorkflowSpec, values: Mapping[str, Any], sealer: TextSealer | None,
            stopped: str = STOPPED["unknown"]) -> RunView:
    """The view of a run whose latest state is ``values``; ``stopped`` explains a run whose
    process died during an automated step. Secrets are masked in the instructions (only in
    the values rendered into them); ``payload`` and the envelope mask the rest."""
    status = values.get("status", "running")
    view = RunView(status, masker=masker_of(spec, values, sealer))
    if status == "aborted":
        view.errors = compensation_errors(values)
    if status in ("completed", "aborted") or values.get("cursor") is None:
        return view
    step = spec.step(values["cursor"])
    confirming = awaiting_confirmation(values)
    failed = not confirming and (status == "failed" or step.type == "automated")
    view.status = "failed" if failed else "awaiting_input"
    view.gate = gate_of(spec, values)
    lookup = run_lookup(values, None)
    instructions = render_lenient(step.body, lambda ref: view.masker.value(lookup(ref)))
    if confirming:
        instructions = (
            f"canal is about to call {step.automation.tool} with the arguments in 'call'. "  # type: ignore[union-attr]
            "Show them to the user; submit {\"confirm\": true} to go ahead or "
            "{\"confirm\": false} to stop here.\n\n" + instructions).strip()
    view.step = StepView(id=step.id, type=step.type, title=step.title,
                         instructions=instructions,
                         gate={name: f.to_json() for name, f in view.gate.items()},
                         call=_pending_call(step, values) if confirming else None,
                         references=[{"name": d.name, "text": d.text}
                                     for d in step.references] or None)
    if failed:
        failure = values.get("failure") or {
            "step": step.id, "tool": step.automation.tool if step.automation else None,
            "error": stopped}
        view.errors = [error_item(failure)]
    return view


def payload(view: RunView, rejected: Mapping[str, Any] | None) -> dict[str, Any]:
    """An interrupt's value: the step, and what was wrong with the previous answer (or the
    failure the step is parked with), secrets masked."""
    rejected = rejected or {}
    value = {"step": view.step.to_json() if view.step else None,
             "errors": [error_item(e) for e in rejected.get("errors") or view.errors],
             "missing": list(rejected.get("missing") or []),
             "dropped": list(rejected.get("dropped") or [])}
    return view.masker.document(value)


def response_schema(view: RunView) -> dict[str, Any]:
    return json_schema(view.gate)


def compensation_errors(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Failed compensations of an aborted run (and one line if they were cut short)."""
    errors: list[dict[str, Any]] = [
        {"code": "compensation_failed", "message": e["error"], "step": e["step"],
         "tool": e["tool"], "compensation": True}
        for e in values.get("log") or [] if e["kind"] == "compensate" and not e["ok"]]
    if values.get("compensating"):
        errors.append({"code": "compensation_incomplete", "message": "the compensations were "
                       "cut short; canal recover finishes them", "step": values.get("cursor"),
                       "compensation": True})
    return errors


def error_item(error: Mapping[str, Any]) -> dict[str, Any]:
    """``error`` in the one shape every answer's ``errors`` use: ``code`` and ``message``
    first, then where it happened (``field``; or ``step``, ``tool``, ``key``, ``kind``).
    A gate's field error has the code ``invalid``; a failed step's code is its kind
    (``postcondition_failed`` for a read-back); a step whose process stopped, ``stopped``."""
    item = dict(error)
    text = item.pop("error", None)
    message = item.pop("message", text or "")
    code = item.pop("code", None) or ("invalid" if "field" in item else
                                      item.get("kind") or "stopped")
    return {"code": code, "message": message, **item}


def _pending_call(step: StepSpec, values: Mapping[str, Any]) -> dict[str, Any]:
    """The call awaiting confirmation, as far as it resolves (sealed values stay sealed:
    they are masked when shown)."""
    assert step.automation is not None
    try:
        arguments: Any = resolve(step.automation.input_mapping, run_lookup(values, None))
    except TemplateError as exc:
        arguments = {"error": exc.message}
    return {"tool": step.automation.tool, "arguments": arguments}
