"""``canal plan``: what the next ``advance`` with some data would call, without calling it.

A dry run (DESIGN.md §7). ``Canal.plan`` checks the data against the current gate exactly
as ``advance`` does (a rejection is the same ``rejected`` envelope); accepted data is
played here on a copy of the run's latest values. Nothing else is touched: no tool is
called, no server started, no lock taken, no graph compiled, nothing written.

What the answer does at the step the run waits at:

* an interactive step: its data becomes the step's gate data (sensitive values sealed as
  ``advance`` seals them, so they are masked in the plan);
* a notification: acknowledged;
* a call awaiting confirmation: ``confirm: true`` plans that call (it is not asked again);
  ``false`` plans nothing and the run stops at that step (parked as declined);
* a failed step, or one whose process stopped mid-step: ``retry`` plans the call again, as
  a new attempt unless the failure was a call that may or may not have happened (then the
  same call is resent), so a step that asks for confirmation asks again and the plan stops
  there; ``recheck`` (after a failed read-back) plans only the read-back and goes on;
  ``skip`` goes on (the step's values stay as they are: a reference to a result it never
  produced is an error, as in a run); ``abort`` plans the compensations that would run
  (items with ``"compensation": true``, newest first) and the run ends (``stops_at`` null).

Then the following steps are walked with ``canal.nodes.route``, the functions the graph
routes with, over a lookup in which the result of every call this plan makes is not known
yet (``Pending``). Each automated step gives one item::

    {"step", "tool", "arguments", "when", "confirm", "hints"}   (+ "verify": {"tool", "arguments"})

* ``arguments``: the input mapping resolved as far as known; a reference to a result not
  produced yet stays as its template text; a reference to a skipped step's values is
  absent (the argument left out). An ``idempotency_key`` argument shows the call's key.
* ``when``: ``true``, ``false`` (the step is skipped: it is listed, but not called, and
  its values are absent from then on) or ``"undecided"`` (the condition reads a result not
  produced yet; the walk goes on as if it ran, as its result is not known either).
* ``confirm``: the run asks for confirmation before this call (its ``confirm_steps``): it
  pauses there, so the call is not made by this ``advance``; ``stops_at`` is that step.
* ``hints``: the tool's MCP annotations from the tool cache (``{}`` for a Python tool or
  one the cache does not know).
* ``error``: the mapping does not resolve; ``advance`` would park the step as failed, so
  the walk ends there (``stops_at`` is that step).
* ``errors``: the arguments, known in full, do not fit the tool's schema
  (``ToolClient.check_arguments``, ``[{"field", "message"}]``); ``advance`` would park the
  step as failed (``invalid_arguments``) without calling it, so the walk ends there too.
  Arguments that wait for a result not produced yet are not judged.

The walk ends at the first interactive or notification step whose condition is not false
(``stops_at``), or at the end of the workflow (``stops_at`` null). The plan assumes every
call succeeds and every read-back agrees; a call whose outcome the call journal already
holds is replayed by ``advance`` rather than sent, and is listed all the same.

The document: ``{"status": "ok", "thread_id", "workflow", "step", "plan", "stops_at",
"dropped"}``, sensitive values masked as in envelopes. Pure functions of the spec, the
values and the data; imports no LangGraph and no MCP client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from canal.errors import TemplateError
from canal.jsontypes import Checked
from canal.nodes.failure import Failure, argument_errors
from canal.nodes.keys import call_key
from canal.nodes.lookup import SKIPPED_BY_ACTION, SKIPPED_BY_CONDITION, run_lookup
from canal.nodes.rewind import source_step
from canal.nodes.route import target
from canal.nodes.sensitive import TextSealer, masker_of, seal_fields
from canal.nodes.view import awaiting_confirmation
from canal.spec.models import FieldSpec, StepSpec, WorkflowSpec
from canal.spec.templates import Lookup, Pending, pending_as_text, resolve

Hints = Callable[[str], dict[str, Any]]  # tool -> its MCP annotations ({} when none)
Check = Callable[[str, dict[str, Any]], Checked]  # tool, arguments -> the argument check


def plan_of(thread_id: str, spec: WorkflowSpec, values: Mapping[str, Any],
            gate: Mapping[str, FieldSpec], data: Mapping[str, Any], sealer: TextSealer,
            hints: Hints, check: Check) -> dict[str, Any]:
    """The plan of the next ``advance`` of a running run whose latest state is ``values``,
    given ``data`` that passed ``gate`` (the step's gate now), as the JSON document."""
    run = DryRun(spec, thread_id, _copy(values), sealer, hints, check)
    stops_at = run.answer(gate, data)
    document = {"status": "ok", "thread_id": thread_id, "workflow": spec.name,
                "step": values["cursor"], "plan": run.items, "stops_at": stops_at}
    return masker_of(spec, run.values, sealer).naming(thread_id).document(document)


def asks_confirmation(values: Mapping[str, Any], step_id: str) -> bool:
    """The run asks for confirmation before the call of ``step_id`` (the rule of
    ``canal.nodes.confirmation``: once per attempt, for the run's ``confirm_steps``)."""
    attempt = (values.get("attempts") or {}).get(step_id, 0)
    return (step_id in (values.get("confirm_steps") or [])
            and (values.get("confirmed") or {}).get(step_id) != attempt)


@dataclass
class DryRun:
    """One plan in the making: the run's values as the answer and the walk change them,
    the steps whose calls it makes (their results are ``Pending``) and the items so far."""

    spec: WorkflowSpec
    thread_id: str
    values: dict[str, Any]
    sealer: TextSealer
    hints: Hints
    check: Check
    pending: set[str] = field(default_factory=set)
    items: list[dict[str, Any]] = field(default_factory=list)

    def answer(self, gate: Mapping[str, FieldSpec], data: Mapping[str, Any]) -> str | None:
        """Apply the answer to the step the run waits at, then walk on; ``stops_at``."""
        cursor = self.values["cursor"]
        step = self.spec.step(cursor)
        if awaiting_confirmation(self.values):
            if data["confirm"] is not True:
                return cursor
            attempt = self.values["attempts"].get(cursor, 0)
            self.values["confirmed"][cursor] = attempt
            return cursor if self.call(step, True) else self.walk(cursor)
        if self.values.get("status") == "failed" or step.type == "automated":
            return self.action(step, data["action"], data.get("step"))
        if step.type == "interactive":
            self.values["gate"][cursor] = seal_fields(gate, data, self.sealer)
        return self.walk(cursor)

    def action(self, step: StepSpec, action: str, target: str | None = None) -> str | None:
        """The ``action`` answered to a failed step (or one stopped mid-step)."""
        if action == "edit":  # back to an interactive step: nothing is called
            return target or source_step(self.spec, step.id)
        if action == "abort":
            self.compensations()
            return None
        if action == "skip":
            self.values["skipped"][step.id] = SKIPPED_BY_ACTION
            return self.walk(step.id)
        if action == "recheck":
            assert step.verify is not None  # only a failed read-back offers recheck
            item = self.entry(step.id, step.verify.tool, step.verify.input_mapping, True,
                              False, read_back=True)
            self.items.append(item)
            return step.id if "error" in item else self.walk(step.id)
        failure = Failure.from_state(self.values.get("failure") or _stopped(step, self.values))
        if not failure.resend_same_key:
            self.values["attempts"][step.id] = self.values["attempts"].get(step.id, 0) + 1
        return step.id if self.call(step, True) else self.walk(step.id)

    def walk(self, after: str) -> str | None:
        """Walk the steps after ``after`` as the graph routes them; ``stops_at``."""
        while True:
            goto, decisions = target(self.spec, after, self.lookup(self.sealer))
            for step_id, decision in decisions:
                if decision is False:
                    self.values["skipped"][step_id] = SKIPPED_BY_CONDITION
            for step_id, decision in decisions:
                step = self.spec.step(step_id)
                if decision is False and step.type == "automated":
                    self.items.append(self.item(step, False))
            if goto is None:
                return None
            step = self.spec.step(goto)
            if step.type != "automated" or self.call(step, decisions[-1][1]):
                return goto
            after = goto

    def call(self, step: StepSpec, decision: bool | None) -> bool:
        """Plan ``step``'s call; whether the run stops at it (it asks for confirmation, or
        its arguments do not resolve)."""
        item = self.item(step, decision)
        self.items.append(item)
        if (item["confirm"] or "error" in item or "errors" in item
                or "error" in item.get("verify", {})):
            return True
        self.pending.add(step.id)
        return False

    def item(self, step: StepSpec, decision: bool | None) -> dict[str, Any]:
        """The item of an automated step decided ``decision``."""
        automation = step.automation
        assert automation is not None
        item = self.entry(step.id, automation.tool, automation.input_mapping, decision,
                          asks_confirmation(self.values, step.id))
        arguments = item["arguments"]
        key = call_key(self.thread_id, step.id, self.values["attempts"].get(step.id, 0))
        if automation.idempotency_key and isinstance(arguments, dict):
            arguments[automation.idempotency_key] = key
        if decision is not False and "error" not in item:
            errors = self.violations(step, key)
            if errors:
                item["errors"] = errors
        if step.verify is not None:
            read_back: dict[str, Any] = {"tool": step.verify.tool}
            try:  # the step's own result is not known before its call
                read_back["arguments"] = self.arguments(step.verify.input_mapping, step.id)
            except TemplateError as exc:
                read_back |= {"arguments": None, "error": exc.message}
            item["verify"] = read_back if decision is not False else _quiet(read_back)
        return item

    def entry(self, step_id: str, tool: str, mapping: Any, decision: bool | None,
              confirm: bool, **flags: Any) -> dict[str, Any]:
        """One planned call. A step decided false is never resolved by a run, so a mapping
        of it that does not resolve is shown as written rather than as an error."""
        item = {"step": step_id, "tool": tool, "arguments": None, "when": _when(decision),
                "confirm": confirm, "hints": dict(self.hints(tool)), **flags}
        try:
            item["arguments"] = self.arguments(mapping)
        except TemplateError as exc:
            if decision is False:
                item["arguments"] = mapping
            else:
                item["error"] = exc.message
        return item

    def violations(self, step: StepSpec, key: str) -> list[dict[str, str]]:
        """Why ``advance`` would refuse to send ``step``'s call (``invalid_arguments``):
        its arguments as the call gets them (sealed values opened, the idempotency key
        added) checked against the tool's schema; none while an argument waits for a
        result not produced yet."""
        automation = step.automation
        assert automation is not None
        known, waiting = self.lookup(self.sealer), []

        def lookup(ref: Any) -> Any:
            value = known(ref)
            if isinstance(value, Pending):
                waiting.append(ref)
            return value

        try:
            arguments = resolve(automation.input_mapping, lookup)
        except TemplateError:
            return []
        if waiting or not isinstance(arguments, dict):
            return []
        if automation.idempotency_key:
            arguments[automation.idempotency_key] = key
        check = self.check(automation.tool, arguments)
        return [] if check.accepted else argument_errors(check)

    def compensations(self) -> None:
        """The compensation calls an abort makes (``canal.nodes.compensate``): each
        completed step that declares one, newest first."""
        result = self.values.get("result") or {}
        for step in reversed(self.spec.steps):
            if step.compensate is None or step.id not in result:
                continue
            self.items.append(self.entry(step.id, step.compensate.tool,
                                         step.compensate.input_mapping, True, False,
                                         compensation=True))

    def arguments(self, mapping: Any, *unknown: str) -> Any:
        """``mapping`` resolved as far as known (sealed values stay sealed: they are masked
        in the document); TemplateError as a run would raise it."""
        return pending_as_text(resolve(mapping, self.lookup(None, *unknown)))

    def lookup(self, sealer: TextSealer | None, *unknown: str) -> Lookup:
        """References over the values so far; a result this plan would produce (or one of
        ``unknown``) is Pending. With ``sealer``, sealed values are opened (to decide
        conditions, as the graph does)."""
        known = run_lookup(self.values, sealer)
        pending = self.pending | set(unknown)

        def lookup(ref: Any) -> Any:
            if ref.namespace == "result" and ref.step in pending:
                return Pending(ref.text)
            return known(ref)

        return lookup


def _when(decision: bool | None) -> bool | str:
    return "undecided" if decision is None else decision


def _quiet(read_back: dict[str, Any]) -> dict[str, Any]:
    """A skipped step's read-back: never made, so no error is reported for it."""
    return {k: v for k, v in read_back.items() if k != "error"}


def _stopped(step: StepSpec, values: Mapping[str, Any]) -> dict[str, Any]:
    """The failure a step whose process stopped mid-step is parked with when answered
    (``canal.nodes.automated.parked``): a read-back, or a call that may have happened."""
    kind = "postcondition" if values.get("verifying") == step.id and step.verify else "in_flight"
    return {"step": step.id, "kind": kind, "tool": step.automation.tool if step.automation
            else ""}


def _copy(values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with the maps the plan changes copied (the run's own stay as they are)."""
    copied = dict(values)
    for key in ("gate", "skipped", "attempts", "confirmed"):
        copied[key] = dict(values.get(key) or {})
    return copied
