"""Notification steps: hand a rendered message to the agent and wait for its acknowledgement."""

from __future__ import annotations

from typing import Any, Callable

from langgraph.types import Command

from canal.nodes.base import entry, go_to, pause
from canal.spec.models import StepSpec


def notification(step: StepSpec, next_id: str | None) -> Callable[[dict[str, Any]], Command]:
    """Interrupt once; an empty submission acknowledges the message and moves on."""
    return pause(step.id, step.type,
                 lambda _data, _state: go_to(next_id, {"log": [entry("acknowledge", step.id)]}))
