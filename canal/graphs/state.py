"""The state of a run: a TypedDict of JSON-plain values, so every checkpointer can hold it.

Public keys (DESIGN.md §8), which a parent graph or a LangGraph Server client reads:
``status``, ``gate`` (step id -> accepted data, sensitive values sealed) and ``result``
(step id -> tool result). The others are canal's own and may change.

The input a client may give is ``RunInput``: only ``gate``, as pre-answers. A client's
write to ``gate`` never lands among the accepted data: the reducer parks it under
``PREFILL`` until the ``run.begin`` node hands it, as ``prefill``, to the steps that check
it. Nodes write accepted data through ``canal.nodes.base.accept()``.

``log`` holds the entries of the last step only (a ``Topic`` channel that empties every
step), so a checkpoint's size does not grow with the run's length: a run retried a
thousand times would otherwise copy its whole history into every checkpoint. The whole
log is the entries of the checkpoints on the run's parent chain, oldest first
(``canal.runtime.log.run_log``; ``graph.get_state_history()`` gives the same).

``span`` is the open span of the step the run is at (``canal.nodes.spans``); ``skipped``
names the steps passed over, by a ``when`` condition or the ``skip`` action.
"""

from __future__ import annotations

from typing import Annotated, Any, TypedDict

from langgraph.channels.topic import Topic

from canal.nodes.base import ACCEPTED, PREFILL, REPLACE
from canal.nodes.spans import tally


def merge(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any]:
    """Reducer for per-step maps: later writes for a step replace earlier ones; a rewind
    replaces the whole map (``canal.nodes.base.replaced``)."""
    if isinstance(right, dict) and set(right) == {REPLACE}:
        return dict(right[REPLACE])
    return {**(left or {}), **(right or {})}


def merge_gate(left: dict[str, Any] | None, right: Any) -> dict[str, Any]:
    """Reducer for ``gate``: a node's ``accept()`` merges (and clears parked input); any
    other write is a client's input, parked as pre-answers."""
    left = dict(left or {})
    if isinstance(right, dict) and set(right) == {REPLACE}:  # a rewind (nodes only)
        return dict(right[REPLACE])
    if isinstance(right, dict) and set(right) == {ACCEPTED}:
        left.pop(PREFILL, None)
        return {**left, **right[ACCEPTED]}
    if right is not None:
        left[PREFILL] = right
    return left


class RunInput(TypedDict, total=False):
    gate: dict[str, Any]                            # step id -> pre-answers


class RunState(TypedDict, total=False):
    workflow: str                                   # the workflow's name
    digest: str                                     # content digest of the definition it runs
    status: str                                     # running | failed | completed | aborted
    cursor: str | None                              # id of the step the run is at (None when done)
    gate: Annotated[dict[str, Any], merge_gate]     # step id -> accepted gate data
    result: Annotated[dict[str, Any], merge]        # step id -> tool result
    failure: dict[str, Any] | None                  # Failure.to_state() while parked as failed
    rejected: dict[str, Any] | None                 # the last bad answer: step, errors, ...
    prefill: Annotated[dict[str, Any], merge]       # step id -> pre-answers not yet checked
    attempts: Annotated[dict[str, int], merge]      # step id -> attempt number (retry answers)
    approved: Annotated[dict[str, str], merge]      # step id -> call key a person chose to resend
    compensating: bool                              # aborted, compensations not all done yet
    confirm_steps: list[str]                        # steps asking for confirmation, fixed at start
    confirmed: Annotated[dict[str, int], merge]     # step id -> attempt that was confirmed
    skipped: Annotated[dict[str, str], merge]       # step id -> "when" | "action"
    verifying: str | None                           # the step whose read-back runs next
    rechecks: Annotated[dict[str, int], merge]      # step id -> read-backs asked again
    span: Annotated[dict[str, Any] | None, tally]   # the open span of the cursor's step
    log: Annotated[list[dict[str, Any]], Topic(dict)]  # the last step's transitions
