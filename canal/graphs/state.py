"""The state of a run: a TypedDict of JSON-plain values, so every checkpointer can hold it."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict


def merge(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer for per-step maps: later writes for a step replace earlier ones."""
    return {**(left or {}), **(right or {})}


class RunState(TypedDict, total=False):
    workflow: str                                   # the workflow's name
    digest: str                                     # content digest of the definition it started with
    status: str                                     # running | failed | completed | aborted
    cursor: str | None                              # id of the step the run is at (None when done)
    gate: Annotated[dict[str, Any], merge]          # step id -> accepted gate data
    result: Annotated[dict[str, Any], merge]        # step id -> tool result
    failure: dict[str, Any] | None                  # {step, tool, error, key} while parked as failed
    attempts: Annotated[dict[str, int], merge]      # step id -> attempt number (retry answers)
    approved: Annotated[dict[str, str], merge]      # step id -> call key a person chose to resend
    compensating: bool                              # aborted, compensations not all done yet
    thread_id: str                                  # the run's own thread id
    confirm_steps: list[str]                        # steps asking for confirmation, fixed at start
    confirmed: Annotated[dict[str, int], merge]     # step id -> attempt that was confirmed
    log: Annotated[list[dict[str, Any]], operator.add]  # every transition, in order


def initial_state(workflow: str, digest: str, first_step: str, thread_id: str,
                  confirm_steps: list[str]) -> RunState:
    from canal.nodes.base import entry

    return RunState(workflow=workflow, digest=digest, status="running", cursor=first_step,
                    gate={}, result={}, failure=None, attempts={}, approved={},
                    thread_id=thread_id, confirm_steps=confirm_steps, confirmed={},
                    log=[entry("start", None, workflow=workflow, digest=digest)])
