"""Confirmation before a destructive call.

An automated step whose tool is marked ``destructiveHint: true`` (or that says
``confirm: true``) gets this node under its own name, in front of the node that calls the
tool. It asks once per attempt for ``{"confirm": true}``; ``false`` parks the run as failed
with the ``action`` gate (``retry`` asks again). A step already confirmed for the current
attempt (a resend after a crash) passes straight through.
"""

from __future__ import annotations

from typing import Any, Callable

from langgraph.types import Command, interrupt

from canal.nodes.base import aborted, call_node, entry, is_abort, recovery_node
from canal.nodes.keys import call_key
from canal.spec.models import StepSpec

DECLINED = "the call was not confirmed"


def confirmation(step: StepSpec) -> Callable[[dict[str, Any]], Command]:
    assert step.automation is not None

    def node(state: dict[str, Any]) -> Command:
        attempt = (state.get("attempts") or {}).get(step.id, 0)
        if (state.get("confirmed") or {}).get(step.id) == attempt:
            return Command(goto=call_node(step.id))
        # Nothing with a side effect before interrupt(): the node reruns on resume.
        value = interrupt({"step": step.id, "type": "confirmation"})
        if is_abort(value):
            return aborted(step.id)
        if (value.get("data") or {}).get("confirm") is True:
            return Command(goto=call_node(step.id), update={
                "confirmed": {step.id: attempt},
                "log": [entry("confirm", step.id, confirm=True, attempt=attempt)]})
        key = call_key(state.get("thread_id", ""), step.id, attempt)
        return Command(goto=recovery_node(step.id), update={
            "status": "failed", "cursor": step.id,
            "log": [entry("confirm", step.id, confirm=False, attempt=attempt)],
            "failure": {"step": step.id, "tool": step.automation.tool, "error": DECLINED,
                        "key": key}})

    node.__name__ = f"confirmation_{step.id}"
    return node
