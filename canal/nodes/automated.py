"""Automated steps: resolve the input mapping from state, call the tool, store the result.

Each automated step is three nodes, four with a read-back: the step's own name
(``canal.nodes.confirmation``, which makes the call itself unless it must first ask for a
confirmation), ``<id>.call`` (this module's ``automated``, the call after a confirmation),
``<id>.verify`` (``canal.nodes.verify``) and ``<id>.recover`` (``canal.nodes.recovery``),
where a failed step parks the run with an ``action`` gate.

Crash safety (DESIGN.md §3). Each call has a key, ``<thread>:<step>:<attempt>``, where the
attempt grows only when a person answers ``retry`` to a failed call. Once the tool is ready
to take the call (``ToolClient.prepare``: its server started, the session open), and just
before the request goes out, the journal records the key and an argument digest; after it,
the outcome. A process killed while a server starts has sent nothing and left no record.
When the node runs again for the same key (the process died somewhere in between):

* the outcome is in the journal: it is replayed, the tool is not called again;
* the call was in flight: it is sent again only if the tool is safe to repeat
  (``readOnlyHint``/``idempotentHint``, or ``automation.idempotent: true``) or a person
  answered ``retry``; otherwise the step fails with kind ``in_flight``.

Before anything else, the resolved arguments (the idempotency key included) are checked
against the tool's schema and rules (``ToolClient.check_arguments``, the check ``canal call``
makes): arguments that do not fit fail the step with kind ``invalid_arguments`` and
per-argument ``errors``, with nothing journaled, no server started and nothing sent: a
value a gate let through (it lacked the tool's enum) but the tool refuses never reaches it.

Each call sent streams a ``started`` and a ``finished`` tool event (``canal.nodes.events``).

Transient failures (connection, timeout) are retried with backoff up to ``retry.attempts``,
only when the tool is safe to repeat. A failure never raises out of the node: it routes to
the step's recovery node.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from langgraph.types import Command

from canal.errors import TemplateError, ToolError
from canal.failpoints import failpoint
from canal.nodes.base import call_node, entry, recovery_node, verify_node
from canal.nodes.deps import Deps, thread_id
from canal.nodes.events import ToolEvents
from canal.nodes.failure import STOPPED, Failure, FailureKind, argument_errors, invalid_arguments
from canal.nodes.keys import call_key, safe_to_repeat
from canal.nodes.lookup import run_lookup
from canal.nodes.moves import go_on
from canal.nodes.sensitive import TextSealer
from canal.spec.models import RetrySpec, StepSpec, WorkflowSpec
from canal.spec.templates import resolve
from canal.tools.client import argument_check


def _digest(arguments: Any, sealer: TextSealer) -> str:
    """The journal's digest of a call's arguments, keyed with canal's key: a plain hash of
    arguments holding a short secret (a PIN) would give it away to whoever reads the file."""
    return sealer.digest_text(json.dumps(arguments, sort_keys=True, separators=(",", ":"),
                                         allow_nan=False))


def arguments_of(mapping: Any, state: dict[str, Any], deps: Deps) -> tuple[Any, Any]:
    """``mapping`` resolved over the run's state: the arguments the tool gets (sealed
    values opened) and the ones the log keeps (sealed values stay sealed)."""
    real = resolve(mapping, run_lookup(state, deps.sealer))
    shown = resolve(mapping, run_lookup(state, None))
    return real, shown


def automated(spec: WorkflowSpec, step: StepSpec, deps: Deps) -> Callable[..., Command]:
    """A node that calls ``step.automation.tool`` at most once per key (see module doc);
    after a successful call it goes on to the step's read-back (``verify``) when it has
    one, else to the next step that runs."""
    automation = step.automation
    assert automation is not None  # the validator guarantees it
    tool = automation.tool

    def node(state: dict[str, Any]) -> Command:
        thread = thread_id()
        failpoint(f"before-step:{step.id}")
        attempt = (state.get("attempts") or {}).get(step.id, 0)
        key = call_key(thread, step.id, attempt)
        base = {"tool": tool, "attempt": attempt, "key": key}
        try:
            arguments, shown = arguments_of(automation.input_mapping, state, deps)
        except TemplateError as exc:
            return failed(Failure("template", step.id, tool, key, exc.message),
                          [entry("tool", step.id, **base, arguments=None, ok=False,
                                 error=exc.message)])
        if automation.idempotency_key:
            arguments[automation.idempotency_key] = shown[automation.idempotency_key] = key
        refused = refusal(tool, arguments, deps)
        if refused is not None:
            failure = Failure("invalid_arguments", step.id, tool, key, *refused)
            return failed(failure, [entry("tool", step.id, **base, arguments=shown, ok=False,
                                          error=failure.message, errors=list(refused[1]))])
        approved = (state.get("approved") or {}).get(step.id) == key
        outcome, record = journaled(Call.of(step), deps, thread, key, arguments, approved)
        log = [entry("tool", step.id, **base, arguments=shown, **record, **outcome)]
        sent = {} if record.get("in_flight") else {
            "requested": 1, "completed": 1 if outcome["ok"] else 0}
        if not outcome["ok"]:
            kind: FailureKind = "in_flight" if record.get("in_flight") else "tool_error"
            return failed(Failure(kind, step.id, tool, key, outcome["error"]), log, sent)
        update = {"result": {step.id: outcome["result"]}, "log": log, "span": sent}
        if step.verify is not None:
            return Command(goto=verify_node(step.id), update={**update,
                                                              "verifying": step.id})
        return go_on(spec, step.id, state, update, deps)

    node.__name__ = f"automated_{step.id}"
    return node


def refusal(tool: str, arguments: Any,
            deps: Deps) -> tuple[str, tuple[dict[str, str], ...]] | None:
    """Why ``arguments`` may not be sent to ``tool`` (the message and the per-argument
    errors), or None when they fit its schema; reads the tool cache only."""
    check = argument_check(deps.tools)(tool, arguments)
    if check.accepted:
        return None
    errors = argument_errors(check)
    return invalid_arguments(tool, errors), tuple(errors)


@dataclass(frozen=True)
class Call:
    """One tool call a step makes (its action, or its compensation)."""

    step: str
    tool: str
    idempotent: bool = False
    retry: RetrySpec | None = None
    timeout: float | None = None
    compensation: bool = False  # the step's compensation, not its action
    verify: bool = False        # the step's read-back, not its action

    @property
    def point(self) -> str:
        """The failpoint and journal name: the step id, ``compensate:<step id>`` or
        ``verify:<step id>``."""
        if self.compensation:
            return f"compensate:{self.step}"
        return f"verify:{self.step}" if self.verify else self.step

    @classmethod
    def of(cls, step: StepSpec) -> Call:
        assert step.automation is not None
        return cls(step.id, step.automation.tool, step.automation.idempotent, step.retry,
                   step.timeout)


def journaled(call: Call, deps: Deps, thread: str, key: str, arguments: dict[str, Any],
              approved: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """The call's outcome (from the journal, or by calling) and how it was obtained."""
    safe = safe_to_repeat(call.tool, call.idempotent, deps.tools)
    known = deps.journal.call_record(thread, key)
    if known is not None and known["outcome"] is not None:
        return known["outcome"], {"replayed": True}
    if known is not None and not (safe or approved):
        return {"ok": False, "error": Failure("in_flight", "", call.tool, key).message}, {
            "in_flight": True}
    events = ToolEvents(call.step, call.tool, call.compensation, call.verify)
    # Starting a server sends nothing, so it is retried whatever the tool, and the call is
    # journaled as sent only once the server is ready.
    ready, starts = with_retries(call, deps, lambda: deps.tools.prepare(call.tool), True)
    if not ready["ok"]:
        events.finished(False)
        return ready, ({"tries": starts} if starts else {})
    if known is None:
        deps.journal.call_started(thread, key, call.point, _digest(arguments, deps.sealer))
    failpoint(f"before-call:{call.point}")
    outcome, tries = with_retries(
        call, deps, lambda: deps.tools.call(call.tool, arguments, call.timeout), safe)
    tries = starts + tries
    deps.journal.call_finished(thread, key, outcome)
    events.finished(outcome["ok"])
    failpoint(f"after-call:{call.point}")
    return outcome, ({"tries": tries} if tries else {}) | ({"resent": True} if known else {})


def with_retries(call: Call, deps: Deps, action: Callable[[], Any],
                 safe: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Run ``action`` (a step of calling the tool), retrying transient failures when that
    is safe; the outcome and the failed tries before it."""
    attempts = call.retry.attempts if call.retry and safe else 1
    backoff = call.retry.backoff if call.retry else 0
    tries: list[dict[str, Any]] = []
    for number in range(attempts):
        try:
            return {"ok": True, "result": action()}, tries
        except ToolError as exc:
            if not exc.transient or number + 1 == attempts:
                return {"ok": False, "error": exc.message}, tries
            tries.append({"at": entry("try", call.point)["at"], "error": exc.message})
            deps.sleep(backoff * 2 ** number)
    raise AssertionError("unreachable")  # the loop always returns


def failed(failure: Failure, log: list[dict[str, Any]],
           span: dict[str, int] | None = None) -> Command:
    """Park the run at the failed step's recovery node (``span``: counters to add to the
    step's span, ``canal.nodes.spans``)."""
    return Command(goto=recovery_node(failure.step), update={
        "status": "failed", "cursor": failure.step, "log": log, "rejected": None,
        "failure": failure.to_state(), "verifying": None, "span": span or {}})


def parked(step: StepSpec, thread: str, attempt: int,
           verifying: bool = False) -> tuple[Command, str]:
    """The update (and the node it comes from) that parks a step whose process died during
    it, so a person's answer takes the ordinary path. ``retry`` then resends the call under
    its key: the journal replays an outcome it holds and sends a call never sent. A step
    that died while reading back its call (``verifying``) parks as a failed read-back,
    whose ``recheck`` reads it back again."""
    assert step.automation is not None
    key = call_key(thread, step.id, attempt)
    log = [entry("stopped", step.id, attempt=attempt)]
    if verifying and step.verify is not None:
        failure = Failure("postcondition", step.id, step.verify.tool, key,
                          STOPPED["verifying"])
        return failed(failure, log), verify_node(step.id)
    failure = Failure("in_flight", step.id, step.automation.tool, key)
    return failed(failure, log), call_node(step.id)
