"""Compensation: when a run is aborted, undo its completed steps, newest first.

Every automated step that completed and declares ``compensate: {tool, input_mapping}`` gets
one call, whose mapping may use the step's own result. Calls go through the call journal
like any other (key ``<thread>:compensate:<step>``), so a compensation interrupted by a
crash is finished by ``canal recover`` without being sent twice unless that is safe. Each
outcome is logged; a failed compensation is reported with the aborted run, never hidden.
Arguments that do not fit the tool's schema fail that compensation without sending it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.graph import END
from langgraph.types import Command

from canal.errors import TemplateError
from canal.nodes.automated import Call, arguments_of, journaled, refusal
from canal.nodes.base import entry
from canal.nodes.deps import Deps, thread_id
from canal.spec.models import WorkflowSpec


def compensate(spec: WorkflowSpec, deps: Deps) -> Callable[[dict[str, Any]], Command]:
    def node(state: dict[str, Any]) -> Command:
        thread = thread_id()
        result = state.get("result") or {}
        log = []
        for step in reversed(spec.steps):
            if step.compensate is None or step.id not in result:
                continue
            call = Call(step.id, step.compensate.tool, timeout=step.timeout, compensation=True)
            key = f"{thread}:{call.point}"
            shown: Any = None
            how: dict[str, Any]
            try:
                arguments, shown = arguments_of(step.compensate.input_mapping, state, deps)
            except TemplateError as exc:
                outcome, how = {"ok": False, "error": exc.message}, {}
            else:
                refused = refusal(call.tool, arguments, deps)
                if refused is not None:
                    outcome, how = {"ok": False, "error": refused[0],
                                    "errors": list(refused[1])}, {}
                else:
                    outcome, how = journaled(call, deps, thread, key, arguments)
            log.append(entry("compensate", step.id, tool=call.tool, key=key,
                             arguments=shown, **how, **outcome))
        deps.tools.close()
        return Command(goto=END, update={"compensating": False, "log": log})

    node.__name__ = "compensate"
    return node
