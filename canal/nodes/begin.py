"""``run.begin``: the graph's entry. It starts a new run, or sends an existing one back to
where it stands.

``graph.invoke({}, config)`` on a new thread registers the run, fixes the steps that ask
for confirmation and moves to the first step whose ``when`` condition holds. An input
``{"gate": {step: {field: value}}}`` pre-answers interactive steps: each step checks its
pre-answer with its own gate when the run reaches it, and pauses with the errors if it does
not pass.

Invoked with an input on a thread that already holds a run, the node changes nothing but
the pre-answers and goes back to the node the run stands at, which pauses again (or
finishes compensating); a finished run stays finished.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.graph import END
from langgraph.types import Command

from canal.nodes.base import COMPENSATE, PREFILL, accept, entry, now, recovery_node, verify_node
from canal.nodes.deps import Deps, thread_id
from canal.nodes.moves import go_on
from canal.spec.models import WorkflowSpec


def confirm_steps(spec: WorkflowSpec, deps: Deps) -> list[str]:
    """Automated steps that ask for confirmation: ``confirm: true``, or a tool whose MCP
    annotations explicitly say ``destructiveHint: true`` (unless ``confirm: false``)."""
    return [s.id for s in spec.steps if s.automation is not None and (
        s.confirm is True or (s.confirm is None and deps.tools.destructive(s.automation.tool)))]


def where(state: dict[str, Any]) -> str:
    """The node an existing run stands at."""
    status, cursor = state.get("status"), state.get("cursor")
    if status == "aborted":
        return COMPENSATE if state.get("compensating") else END
    if status == "completed" or cursor is None:
        return END
    if status == "failed":
        return recovery_node(cursor)
    return verify_node(cursor) if state.get("verifying") == cursor else cursor


def begin(spec: WorkflowSpec, deps: Deps) -> Callable[[dict[str, Any]], Command]:
    def node(state: dict[str, Any]) -> Command:
        given = (state.get("gate") or {}).get(PREFILL)
        prefill = {step: data for step, data in given.items() if data is not None} \
            if isinstance(given, dict) else {}
        if state.get("workflow"):
            update: dict[str, Any] = {"gate": accept({})}
            if prefill:
                update["prefill"] = prefill
            return Command(goto=where(state), update=update)
        deps.registry.register(thread_id(), spec.name, now())
        return go_on(spec, None, state, {
            "workflow": spec.name, "digest": spec.digest, "gate": accept({}), "result": {},
            "prefill": prefill, "attempts": {}, "approved": {}, "skipped": {}, "rechecks": {},
            "confirm_steps": confirm_steps(spec, deps), "confirmed": {},
            "log": [entry("start", None, workflow=spec.name, digest=spec.digest)]}, deps)

    node.__name__ = "begin"
    return node
