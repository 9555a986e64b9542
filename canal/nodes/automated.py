"""Automated steps: resolve the input mapping from state, call the tool, store the result.

Crash safety (DESIGN.md §3). Each call has a key, ``<thread>:<step>:<attempt>``, where the
attempt grows only when a person answers ``retry`` to a failed call. Before the call the
run's journal records the key and an argument digest; after it, the outcome. When the node
runs again for the same key (the process died somewhere in between):

* the outcome is in the journal: it is replayed, the tool is not called again;
* the call was in flight: it is sent again only if the tool is safe to repeat
  (``readOnlyHint``/``idempotentHint``, or ``automation.idempotent: true``) or a person
  answered ``retry``; otherwise the step fails with "the call may or may not have happened".

Transient failures (connection, timeout) are retried with backoff up to ``retry.attempts``,
only when the tool is safe to repeat. A failure never raises out of the node: it routes to
the step's recovery node, which parks the run as ``failed`` with an ``action`` gate.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from typing import Any, Callable

from langgraph.runtime import Runtime
from langgraph.types import Command

from canal.errors import TemplateError, ToolError
from canal.failpoints import failpoint
from canal.nodes.base import aborted, entry, go_to, pause, recovery_node
from canal.nodes.keys import call_key
from canal.spec.models import RetrySpec, StepSpec
from canal.spec.templates import resolve, run_lookup
from canal.tools.client import ToolClient

UNKNOWN = ("the call may or may not have happened (the process stopped during it); "
           "retry, skip or abort")


@dataclass
class RunContext:
    """What nodes get from the runtime for one operation (LangGraph's run context)."""

    tools: ToolClient
    journal: Any          # the store: call_started / call_finished / call_record
    thread_id: str
    sleep: Callable[[float], None] = time.sleep


def _digest(arguments: Any) -> str:
    text = json.dumps(arguments, sort_keys=True, separators=(",", ":"))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def automated(step: StepSpec, next_id: str | None) -> Callable[..., Command]:
    """A node that calls ``step.automation.tool`` at most once per key (see module doc)."""
    automation = step.automation
    assert automation is not None  # the validator guarantees it
    tool = automation.tool

    def node(state: dict[str, Any], runtime: Runtime[RunContext]) -> Command:
        ctx = runtime.context
        failpoint(f"before-step:{step.id}")
        attempt = (state.get("attempts") or {}).get(step.id, 0)
        key = call_key(ctx.thread_id, step.id, attempt)
        base = {"tool": tool, "attempt": attempt, "key": key}
        try:
            arguments = resolve(automation.input_mapping, run_lookup(state))
        except TemplateError as exc:
            return _failed(step, key, [entry("tool", step.id, **base, arguments=None,
                                             ok=False, error=exc.message)], exc.message)
        if automation.idempotency_key:
            arguments[automation.idempotency_key] = key
        approved = (state.get("approved") or {}).get(step.id) == key
        outcome, record = journaled(Call.of(step), ctx, key, arguments, approved)
        log = [entry("tool", step.id, **base, arguments=arguments, **record, **outcome)]
        if outcome["ok"]:
            return go_to(next_id, {"result": {step.id: outcome["result"]}, "log": log})
        return _failed(step, key, log, outcome["error"])

    node.__name__ = f"automated_{step.id}"
    return node


@dataclass(frozen=True)
class Call:
    """One tool call a step makes (its action, or its compensation)."""

    point: str            # failpoint suffix: the step id, or "compensate:<step id>"
    tool: str
    idempotent: bool = False
    retry: RetrySpec | None = None
    timeout: float | None = None

    @classmethod
    def of(cls, step: StepSpec) -> "Call":
        assert step.automation is not None
        return cls(step.id, step.automation.tool, step.automation.idempotent, step.retry,
                   step.timeout)


def journaled(call: Call, ctx: RunContext, key: str, arguments: dict[str, Any],
              approved: bool = False) -> tuple[dict[str, Any], dict[str, Any]]:
    """The call's outcome (from the journal, or by calling) and how it was obtained."""
    safe = call.idempotent or ctx.tools.safe_to_repeat(call.tool)
    known = ctx.journal.call_record(ctx.thread_id, key)
    if known is not None and known["outcome"] is not None:
        return known["outcome"], {"replayed": True}
    if known is not None and not (safe or approved):
        return {"ok": False, "error": UNKNOWN}, {"in_flight": True}
    if known is None:
        ctx.journal.call_started(ctx.thread_id, key, call.point, _digest(arguments))
    failpoint(f"before-call:{call.point}")
    outcome, tries = _call(call, ctx, arguments, safe)
    ctx.journal.call_finished(ctx.thread_id, key, outcome)
    failpoint(f"after-call:{call.point}")
    return outcome, ({"tries": tries} if tries else {}) | ({"resent": True} if known else {})


def _call(call: Call, ctx: RunContext, arguments: dict[str, Any],
          safe: bool) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Call the tool, retrying transient failures when that is safe; the outcome and the
    failed tries before it."""
    attempts = call.retry.attempts if call.retry and safe else 1
    backoff = call.retry.backoff if call.retry else 0
    tries: list[dict[str, Any]] = []
    for number in range(attempts):
        try:
            return {"ok": True, "result": ctx.tools.call(call.tool, arguments, call.timeout)}, tries
        except ToolError as exc:
            if not exc.transient or number + 1 == attempts:
                return {"ok": False, "error": exc.message}, tries
            tries.append({"at": entry("try", call.point)["at"], "error": exc.message})
            ctx.sleep(backoff * 2 ** number)
    raise AssertionError("unreachable")  # the loop always returns


def _failed(step: StepSpec, key: str, log: list[dict[str, Any]], error: str) -> Command:
    return Command(goto=recovery_node(step.id), update={
        "status": "failed", "cursor": step.id, "log": log,
        "failure": {"step": step.id, "tool": step.automation.tool,  # type: ignore[union-attr]
                    "error": error, "key": key},
    })


def recovery(step: StepSpec, next_id: str | None) -> Callable[[dict[str, Any]], Command]:
    """The node a failed automated step parks at, waiting for ``{"action": ...}``.

    ``retry`` starts a new attempt (a new call key) unless the failure was a call that may or
    may not have happened: then the same call is sent again under the same key, so a
    backend that deduplicates by key can tell.
    """

    def act(data: dict[str, Any], state: dict[str, Any]) -> Command:
        action = data.get("action")
        log = [entry("action", step.id, action=action)]
        if action == "retry":
            attempt = (state.get("attempts") or {}).get(step.id, 0)
            in_flight = (state.get("failure") or {}).get("error") == UNKNOWN
            update: dict[str, Any] = {"status": "running", "cursor": step.id,
                                      "failure": None, "log": log}
            if in_flight:
                update["approved"] = {step.id: state["failure"]["key"]}
            else:
                update["attempts"] = {step.id: attempt + 1}
            return Command(goto=step.id, update=update)
        if action == "skip":
            return go_to(next_id, {"log": log})
        return aborted(step.id)

    return pause(step.id, "failed", act)
