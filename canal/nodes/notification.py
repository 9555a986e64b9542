"""Notification steps: hand a rendered message to the agent and wait for its acknowledgement."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.types import Command

from canal.nodes.ask import ask
from canal.nodes.base import entry, is_abort
from canal.nodes.deps import Deps
from canal.nodes.moves import go_abort, go_on
from canal.spec.models import StepSpec, WorkflowSpec


def notification(spec: WorkflowSpec, step: StepSpec,
                 deps: Deps) -> Callable[[dict[str, Any]], Command]:
    """Pause once; any answer but ``ABORT`` acknowledges the message (LangGraph drops a
    falsy resume value, so send ``True`` or ``{"ack": true}``, not ``{}``)."""

    def node(state: dict[str, Any]) -> Command:
        value = ask(spec, state, deps)
        if is_abort(value):
            return go_abort(spec, step.id, state, added={"pauses": 1})
        return go_on(spec, step.id, state, {
            "log": [entry("acknowledge", step.id)], "span": {"pauses": 1}}, deps)

    node.__name__ = f"notification_{step.id}"
    return node
