"""Automated steps: resolve the input mapping from state, call the tool, store the result.

A failure (the tool's error, or a reference that does not resolve) never raises out of the
node: it routes to the step's recovery node, which parks the run as ``failed`` with an
``action: retry | skip | abort`` gate.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from langgraph.runtime import Runtime
from langgraph.types import Command

from canal.errors import ToolError
from canal.nodes.base import aborted, entry, go_to, pause, recovery_node
from canal.spec.models import StepSpec
from canal.spec.templates import resolve, state_lookup
from canal.tools.client import ToolClient


@dataclass
class RunContext:
    """What nodes get from the runtime for one operation (LangGraph's run context)."""

    tools: ToolClient


def automated(step: StepSpec, next_id: str | None) -> Callable[..., Command]:
    """A node that calls ``step.automation.tool`` once with the resolved input mapping."""
    assert step.automation is not None  # the validator guarantees it
    tool = step.automation.tool

    def node(state: dict[str, Any], runtime: Runtime[RunContext]) -> Command:
        arguments: Any = None
        try:
            lookup = state_lookup(state.get("gate") or {}, state.get("result") or {})
            arguments = resolve(step.automation.input_mapping, lookup)
            result = runtime.context.tools.call(tool, arguments)
        except ToolError as exc:
            record = entry("tool", step.id, tool=tool, arguments=arguments, ok=False,
                           error=exc.message)
            return Command(goto=recovery_node(step.id), update={
                "status": "failed", "cursor": step.id, "log": [record],
                "failure": {"step": step.id, "tool": tool, "error": exc.message},
            })
        record = entry("tool", step.id, tool=tool, arguments=arguments, ok=True, result=result)
        return go_to(next_id, {"result": {step.id: result}, "log": [record]})

    node.__name__ = f"automated_{step.id}"
    return node


def recovery(step: StepSpec, next_id: str | None) -> Callable[[dict[str, Any]], Command]:
    """The node a failed automated step parks at, waiting for ``{"action": ...}``."""

    def act(data: dict[str, Any]) -> Command:
        action = data.get("action")
        log = [entry("action", step.id, action=action)]
        if action == "retry":
            return Command(goto=step.id, update={"status": "running", "cursor": step.id,
                                                 "failure": None, "log": log})
        if action == "skip":
            return go_to(next_id, {"log": log})
        return aborted(step.id)

    return pause(step.id, "failed", act)

