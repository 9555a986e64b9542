"""Notification steps: hand a rendered message to the agent and wait for its acknowledgement."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langgraph.graph import END
from langgraph.types import Command

from canal.nodes.ask import ask
from canal.nodes.base import COMPENSATE, aborted_update, entry, is_abort, moved
from canal.nodes.deps import Deps
from canal.spec.models import StepSpec, WorkflowSpec


def notification(spec: WorkflowSpec, step: StepSpec, next_id: str | None,
                 deps: Deps) -> Callable[[dict[str, Any]], Command]:
    """Pause once; any answer but ``ABORT`` acknowledges the message (LangGraph drops a
    falsy resume value, so send ``True`` or ``{"ack": true}``, not ``{}``)."""

    def node(state: dict[str, Any]) -> Command:
        value = ask(spec, state, deps)
        if is_abort(value):
            return Command(goto=COMPENSATE, update=aborted_update(step.id))
        return Command(goto=next_id or END, update=moved(next_id, {
            "log": [entry("acknowledge", step.id)]}))

    node.__name__ = f"notification_{step.id}"
    return node
