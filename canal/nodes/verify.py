"""``<id>.verify``: the read-back after an automated step's successful call (DESIGN.md §7).

"A successful API response is evidence that a request was accepted, not that the desired
state now exists." So a step with ``verify`` calls the read-back tool (arguments templated
like any, the step's own result included) and compares each ``expect`` path of what it
returns with the expected value, with JSON types (``canal.spec.conditions``). All pass: the
run goes on. Any mismatch, a failed read-back call or a read-back tool marked destructive
parks the run as failed, code ``postcondition_failed``, with ``errors: [{"path",
"expected", "actual"}]`` and the action gate ``recheck | retry | skip | abort``. So do
read-back arguments that do not fit the tool's schema (checked as a call's are; nothing is
sent).

The read-back goes through the call journal like any call, under the key
``<call key>:verify:<n>`` where ``n`` counts the rechecks, and it is safe to repeat by
definition: a process killed during it reads back again on recovery, and every recheck is
a new read. The step's result (already stored) stays as the call returned it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from langgraph.types import Command

from canal.errors import TemplateError
from canal.failpoints import failpoint
from canal.nodes.automated import Call, arguments_of, failed, journaled, refusal
from canal.nodes.base import entry
from canal.nodes.deps import Deps, thread_id
from canal.nodes.failure import Failure
from canal.nodes.keys import call_key
from canal.nodes.lookup import run_lookup
from canal.nodes.moves import go_on
from canal.nodes.route import resolved_operand
from canal.spec.conditions import expectations, parse_expect
from canal.spec.models import StepSpec, WorkflowSpec


def verify_key(thread: str, step_id: str, attempt: int, recheck: int) -> str:
    return f"{call_key(thread, step_id, attempt)}:verify:{recheck}"


def verification(spec: WorkflowSpec, step: StepSpec,
                 deps: Deps) -> Callable[[dict[str, Any]], Command]:
    verify = step.verify
    assert verify is not None  # compiled only for steps that have one
    tests, _ = parse_expect(verify.expect)

    def node(state: dict[str, Any]) -> Command:
        thread = thread_id()
        attempt = (state.get("attempts") or {}).get(step.id, 0)
        recheck = (state.get("rechecks") or {}).get(step.id, 0)
        key = verify_key(thread, step.id, attempt, recheck)
        base = {"tool": verify.tool, "key": key, "recheck": recheck}
        failpoint(f"before-verify:{step.id}")

        def fail(detail: str, errors: tuple[dict[str, Any], ...] = (), **logged: Any) -> Command:
            failure = Failure("postcondition", step.id, verify.tool, key, detail, errors)
            log = [entry("verify", step.id, **base, ok=False, error=detail, **logged)]
            return failed(failure, log, {"failed": max(1, len(errors))})

        if deps.tools.destructive(verify.tool):
            return fail(f"the read-back tool {verify.tool} is marked destructive "
                        "(destructiveHint); canal reads back only with tools that change "
                        "nothing")
        try:
            arguments, shown = arguments_of(verify.input_mapping, state, deps)
        except TemplateError as exc:
            return fail(f"the read-back's arguments do not resolve: {exc.message}")
        refused = refusal(verify.tool, arguments, deps)
        if refused is not None:  # checked like a call's; recheck after fixing the rules
            return fail(f"the read-back was not made: {refused[0]}", arguments=shown)
        call = Call(step.id, verify.tool, idempotent=True, retry=step.retry,
                    timeout=step.timeout, verify=True)
        outcome, record = journaled(call, deps, thread, key, arguments)
        logged = {"arguments": shown, **record}
        if not outcome["ok"]:
            return fail(f"the read-back call {verify.tool} failed: {outcome['error']}",
                        **logged)
        lookup, sealed = run_lookup(state, deps.sealer), run_lookup(state, None)
        checked = expectations(tests, outcome["result"],
                               lambda operand: resolved_operand(operand, lookup))
        # What is kept and shown of an expected value keeps sealed secrets sealed.
        wrong = tuple(o.to_error(resolved_operand(o.clause.operand, sealed), shown_apart=True)
                      for o in checked if not o.passed)
        passed = len(checked) - len(wrong)
        if wrong:
            first = wrong[0]
            detail = (f"the read-back by {verify.tool} does not show what the call should "
                      f"have done: {first['path']} is {_shown(first)}, expected "
                      f"{_shown_expected(first)}"
                      + (f" (and {len(wrong) - 1} more)" if len(wrong) > 1 else ""))
            failure = Failure("postcondition", step.id, verify.tool, key, detail, wrong)
            log = [entry("verify", step.id, **base, **logged, ok=False, passed=passed,
                         failed=len(wrong), errors=list(wrong), result=outcome["result"])]
            return failed(failure, log, {"passed": passed, "failed": len(wrong)})
        log = [entry("verify", step.id, **base, **logged, ok=True, passed=passed, failed=0,
                     result=outcome["result"])]
        return go_on(spec, step.id, state, {"log": log, "span": {"passed": passed}}, deps)

    node.__name__ = f"verify_{step.id}"
    return node


def _shown(error: dict[str, Any]) -> str:
    return "absent" if error.get("absent") else json.dumps(error["actual"], allow_nan=False)


def _shown_expected(error: dict[str, Any]) -> str:
    return json.dumps(error["expected"], allow_nan=False)
