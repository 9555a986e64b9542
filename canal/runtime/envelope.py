"""The result envelope every runtime call returns (DESIGN.md §4), and how a run's state reads
as one.

Only the latest checkpoint's values and the workflow spec are needed, so read-only calls
(``current``, ``runs``) build envelopes without compiling a graph.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from canal.nodes.gate import ACTION_GATE, CONFIRM_GATE
from canal.runtime.redact import redact, secrets_of
from canal.spec.models import FieldSpec, StepSpec, WorkflowSpec
from canal.errors import TemplateError
from canal.spec.templates import render_lenient, resolve, run_lookup

STATUSES = ("awaiting_input", "completed", "failed", "aborted", "rejected", "stale")
IN_FLIGHT = ("the run stopped while this step was running; the call may or may not have "
             "happened; recover, or answer retry, skip or abort")


@dataclass(frozen=True)
class StepView:
    """The one step an agent needs to see."""

    id: str
    type: str
    instructions: str
    gate: dict[str, Any]
    title: str | None = None
    call: dict[str, Any] | None = None   # the call awaiting confirmation: tool, arguments

    def to_json(self) -> dict[str, Any]:
        data = {"id": self.id, "type": self.type, "title": self.title,
                "instructions": self.instructions, "gate": self.gate, "call": self.call}
        return {k: v for k, v in data.items() if v is not None}


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
    secrets: list[Any] = field(default_factory=list, repr=False)

    def to_json(self) -> dict[str, Any]:
        """The JSON form, with the run's sensitive values masked. (The attributes keep the
        real values, for code in this process, as templates do.)"""
        return redact(self._plain(), self.secrets)

    def __repr__(self) -> str:
        return f"Envelope({self.to_json()!r})"

    def _plain(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "thread_id": self.thread_id, "workflow": self.workflow, "status": self.status,
            "step": self.step.to_json() if self.step else None,
            "executed": self.executed, "errors": self.errors,
            "missing": self.missing, "dropped": self.dropped,
        }
        if self.completed is not None:
            data["completed"] = self.completed
        if self.definition is not None:
            data["definition"] = self.definition
        return data


def awaiting_confirmation(values: Mapping[str, Any]) -> bool:
    """The run waits for a person to confirm the call of the step it is at."""
    cursor = values.get("cursor")
    attempt = (values.get("attempts") or {}).get(cursor, 0)
    return (values.get("status") == "running" and cursor in (values.get("confirm_steps") or [])
            and (values.get("confirmed") or {}).get(cursor) != attempt)


def stopped_mid_step(spec: WorkflowSpec, values: Mapping[str, Any]) -> bool:
    """The latest checkpoint sits before an automated step that never finished (and is not
    simply waiting for its confirmation): the process died during that step."""
    return (values.get("status") == "running"
            and spec.step(values["cursor"]).type == "automated"
            and not awaiting_confirmation(values))


def gate_of(spec: WorkflowSpec, values: Mapping[str, Any]) -> dict[str, FieldSpec]:
    """The gate a submission to this run must pass right now."""
    step = spec.step(values["cursor"])
    if awaiting_confirmation(values):
        return CONFIRM_GATE
    if values.get("status") == "failed" or step.type == "automated":
        return ACTION_GATE
    return step.gate if step.type == "interactive" else {}


def envelope_of(thread_id: str, spec: WorkflowSpec, values: Mapping[str, Any],
                executed: list[dict[str, Any]] | None = None,
                stopped: str = IN_FLIGHT) -> Envelope:
    """The envelope of a run whose latest state is ``values``; ``stopped`` explains a run
    whose process died during an automated step."""
    status = values.get("status", "running")
    env = Envelope(thread_id, spec.name, status, executed=list(executed or []),
                   secrets=secrets_of(spec, values))
    if status == "aborted":
        env.errors = compensation_errors(values)
    if status in ("completed", "aborted"):
        return env
    step = spec.step(values["cursor"])
    confirming = awaiting_confirmation(values)
    failed = not confirming and (status == "failed" or step.type == "automated")
    env.status = "failed" if failed else "awaiting_input"
    gate = gate_of(spec, values)
    env.step = StepView(
        id=step.id, type=step.type, title=step.title,
        instructions=_instructions(step, values),
        gate={name: f.to_json() for name, f in gate.items()},
        call=_pending_call(step, values) if confirming else None,
    )
    if confirming:
        env.step = replace(env.step, instructions=(
            f"canal is about to call {step.automation.tool} with the arguments in 'call'. "  # type: ignore[union-attr]
            "Show them to the user; submit {\"confirm\": true} to go ahead or "
            "{\"confirm\": false} to stop here.\n\n" + env.step.instructions).strip())
    if failed:
        failure = values.get("failure") or {
            "step": step.id, "tool": step.automation.tool if step.automation else None,
            "error": stopped,
        }
        env.errors = [dict(failure)]
    return env


def compensation_errors(values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Failed compensations of an aborted run (and one line if they were cut short)."""
    errors: list[dict[str, Any]] = [
        {"step": e["step"], "tool": e["tool"], "error": e["error"], "compensation": True}
        for e in values.get("log") or [] if e["kind"] == "compensate" and not e["ok"]]
    if values.get("compensating"):
        errors.append({"step": values.get("cursor"), "compensation": True,
                       "error": "the compensations were cut short; canal recover finishes them"})
    return errors


def _pending_call(step: StepSpec, values: Mapping[str, Any]) -> dict[str, Any]:
    assert step.automation is not None
    lookup = run_lookup(values)
    try:
        arguments: Any = resolve(step.automation.input_mapping, lookup)
    except TemplateError as exc:
        arguments = {"error": exc.message}
    return {"tool": step.automation.tool, "arguments": arguments}


def _instructions(step: StepSpec, values: Mapping[str, Any]) -> str:
    return render_lenient(step.body, run_lookup(values))


def completed_steps(spec: WorkflowSpec, values: Mapping[str, Any]) -> list[dict[str, Any]]:
    """What the run has done so far, step by step, for a session that knows nothing."""
    done: list[dict[str, Any]] = []
    gate, result = values.get("gate") or {}, values.get("result") or {}
    for step in spec.steps:
        if step.id == values.get("cursor"):
            break
        item: dict[str, Any] = {"step": step.id, "type": step.type}
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
