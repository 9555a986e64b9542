"""Interactive steps: pause until the agent submits data that passed the gate."""

from __future__ import annotations

from typing import Any, Callable

from langgraph.types import Command

from canal.nodes.base import entry, go_to, pause
from canal.spec.models import StepSpec


def interactive(step: StepSpec, next_id: str | None) -> Callable[[dict[str, Any]], Command]:
    """Interrupt once; store the submitted gate data (checked by the runtime) under the step id.

    A step without a gate schema is a plain confirmation: an empty submission continues.
    """

    def store(data: dict[str, Any], _state: dict[str, Any]) -> Command:
        return go_to(next_id, {"gate": {step.id: data},
                               "log": [entry("submit", step.id, data=data)]})

    return pause(step.id, step.type, store)
