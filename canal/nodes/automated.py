"""Automated steps: resolve the input mapping from state, call the tool, store the result.

Each automated step is three nodes: the step's own name (``canal.nodes.confirmation``),
``<id>.call`` (this module's ``automated``) and ``<id>.recover`` (``recovery``), where a
failed step parks the run with an ``action`` gate.

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

from langgraph.graph import END
from langgraph.types import Command

from canal.errors import TemplateError, ToolError
from canal.failpoints import failpoint
from canal.nodes.ask import ask, check_answer, reject
from canal.nodes.base import (
    COMPENSATE,
    aborted_update,
    call_node,
    entry,
    is_abort,
    moved,
    recovery_node,
)
from canal.nodes.deps import Deps, thread_id
from canal.nodes.events import ToolEvents
from canal.nodes.failure import Failure, FailureKind
from canal.nodes.gate import ACTION_GATE
from canal.nodes.keys import call_key, safe_to_repeat
from canal.nodes.sensitive import TextSealer, open_gate
from canal.spec.models import RetrySpec, StepSpec, WorkflowSpec
from canal.spec.templates import resolve, state_lookup


def _digest(arguments: Any, sealer: TextSealer) -> str:
    """The journal's digest of a call's arguments, keyed with canal's key: a plain hash of
    arguments holding a short secret (a PIN) would give it away to whoever reads the file."""
    return sealer.digest_text(json.dumps(arguments, sort_keys=True, separators=(",", ":"),
                                         allow_nan=False))


def arguments_of(mapping: Any, state: dict[str, Any], deps: Deps) -> tuple[Any, Any]:
    """``mapping`` resolved over the run's state: the arguments the tool gets (sealed
    values opened) and the ones the log keeps (sealed values stay sealed)."""
    gate, result = state.get("gate") or {}, state.get("result") or {}
    real = resolve(mapping, state_lookup(open_gate(gate, deps.sealer), result))
    shown = resolve(mapping, state_lookup(gate, result))
    return real, shown


def automated(step: StepSpec, next_id: str | None, deps: Deps) -> Callable[..., Command]:
    """A node that calls ``step.automation.tool`` at most once per key (see module doc)."""
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
        approved = (state.get("approved") or {}).get(step.id) == key
        outcome, record = journaled(Call.of(step), deps, thread, key, arguments, approved)
        log = [entry("tool", step.id, **base, arguments=shown, **record, **outcome)]
        if outcome["ok"]:
            if next_id is None:
                deps.tools.close()
            return Command(goto=next_id or END, update=moved(next_id, {
                "result": {step.id: outcome["result"]}, "log": log}))
        kind: FailureKind = "in_flight" if record.get("in_flight") else "tool_error"
        return failed(Failure(kind, step.id, tool, key, outcome["error"]), log)

    node.__name__ = f"automated_{step.id}"
    return node


@dataclass(frozen=True)
class Call:
    """One tool call a step makes (its action, or its compensation)."""

    step: str
    tool: str
    idempotent: bool = False
    retry: RetrySpec | None = None
    timeout: float | None = None
    compensation: bool = False  # the step's compensation, not its action

    @property
    def point(self) -> str:
        """The failpoint and journal name: the step id, or ``compensate:<step id>``."""
        return f"compensate:{self.step}" if self.compensation else self.step

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
    events = ToolEvents(call.step, call.tool, call.compensation)
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


def failed(failure: Failure, log: list[dict[str, Any]]) -> Command:
    """Park the run at the failed step's recovery node."""
    return Command(goto=recovery_node(failure.step), update={
        "status": "failed", "cursor": failure.step, "log": log, "rejected": None,
        "failure": failure.to_state()})


def parked(step: StepSpec, thread: str, attempt: int) -> tuple[Command, str]:
    """The update (and the node it comes from) that parks a step whose process died during
    it, so a person's answer takes the ordinary path. ``retry`` then resends the call under
    its key: the journal replays an outcome it holds and sends a call never sent."""
    assert step.automation is not None
    failure = Failure("in_flight", step.id, step.automation.tool,
                      call_key(thread, step.id, attempt))
    return failed(failure, [entry("stopped", step.id, attempt=attempt)]), call_node(step.id)


def recovery(spec: WorkflowSpec, step: StepSpec, next_id: str | None,
             deps: Deps) -> Callable[[dict[str, Any]], Command]:
    """The node a failed automated step parks at, waiting for ``{"action": ...}``.

    ``retry`` starts a new attempt (a new call key) unless the failure was a call that may
    or may not have happened: then the same call is sent again under the same key, so a
    backend that deduplicates by key can tell.
    """
    here = recovery_node(step.id)

    def node(state: dict[str, Any]) -> Command:
        value = ask(spec, state, deps)
        if is_abort(value):
            return Command(goto=COMPENSATE, update=aborted_update(step.id))
        check = check_answer(ACTION_GATE, value, deps)
        if not check.accepted:
            return reject(here, step.id, check)
        action = check.data["action"]
        log = [entry("action", step.id, action=action)]
        if action == "abort":
            abort = aborted_update(step.id)
            return Command(goto=COMPENSATE, update={**abort, "log": log + abort["log"]})
        if action == "skip":
            return Command(goto=next_id or END, update=moved(next_id, {"log": log}))
        failure = Failure.from_state(state.get("failure") or {"step": step.id})
        update: dict[str, Any] = {"status": "running", "cursor": step.id, "failure": None,
                                  "rejected": None, "log": log}
        if failure.resend_same_key:
            update["approved"] = {step.id: failure.key}
        else:
            update["attempts"] = {step.id: (state.get("attempts") or {}).get(step.id, 0) + 1}
        return Command(goto=step.id, update=update)

    node.__name__ = f"recovery_{step.id}"
    return node
