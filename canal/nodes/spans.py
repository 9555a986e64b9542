"""Step spans: one record per step of a run, for ``canal history`` and LangChain tracing.

While the run is at a step, the state's ``span`` holds the step's open span: when it
started and what happened so far, as counters the nodes add to (``count``): ``pauses``
(answers the step waited for), ``requested`` and ``completed`` (tool calls sent, and those
that succeeded), ``passed`` and ``failed`` (``verify.expect`` tests). The node that leaves
the step closes the span into a ``span`` log entry::

    {"kind": "span", "step": "reserve", "type": "automated", "outcome": "completed",
     "started": "...", "finished": "...", "duration_ms": 412, "pauses": 0,
     "instructions_chars": 0, "references_chars": 0,
     "effects": {"requested": 1, "completed": 1}, "postconditions": {"passed": 2, "failed": 0}}

``outcome`` is ``completed``, ``skipped`` (a ``when`` condition, or the ``skip`` action) or
``aborted``. The characters are those of the step's instructions and reference files as
the agent was shown them, once per pause (an automated step that never paused shows
nothing). ``report`` hands the same fields to LangChain as the metadata of a ``canal.span``
run inside the node's span, so LangSmith and any callback handler see them.

Pure functions (no LangGraph); ``report`` imports ``langchain_core`` when it runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from canal.nodes.base import entry, now
from canal.spec.models import WorkflowSpec

OPEN, CLOSE = "$open", "$close"
COUNTS = ("pauses", "requested", "completed", "passed", "failed")


def tally(left: dict[str, Any] | None, right: dict[str, Any] | None) -> dict[str, Any] | None:
    """Reducer of the state's ``span``: open a new span, close it, or add counters."""
    left = _unwrapped(left)
    if right is None:
        return left
    if OPEN in right or CLOSE in right:
        return _unwrapped(right)
    merged = dict(left or {})
    for key, value in right.items():
        merged[key] = merged.get(key, 0) + value
    return merged


def _unwrapped(span: dict[str, Any] | None) -> dict[str, Any] | None:
    """A span as it reads: LangGraph stores a channel's first write without calling its
    reducer, so the span a run starts with may still read ``{"$open": ...}`` (with the
    counters added to it beside)."""
    if not span or CLOSE in span:
        return None
    if OPEN not in span:
        return span
    counters = {key: value for key, value in span.items() if key != OPEN}
    return {**span[OPEN], **dict.fromkeys(COUNTS, 0), **counters}


def current(values: Mapping[str, Any]) -> dict[str, Any]:
    """The open span of a run whose state is ``values`` (empty when there is none)."""
    return dict(_unwrapped(values.get("span")) or {})


def count(**counters: int) -> dict[str, Any]:
    """A node's addition to the open span: ``{"span": count(requested=1)}``."""
    return {"span": counters}


def opened(step_id: str | None) -> dict[str, Any]:
    """The ``span`` write that opens the span of ``step_id`` (None: the run ended)."""
    return {OPEN: {"step": step_id, "started": now()}} if step_id else {CLOSE: True}


def closed(spec: WorkflowSpec, step_id: str, values: Mapping[str, Any],
           added: Mapping[str, int] | None, outcome: str) -> dict[str, Any]:
    """The ``span`` log entry of ``step_id``, left now with ``outcome``; ``added`` are the
    counters of the node that leaves it (not yet in ``values``)."""
    span = current(values)
    if span.get("step") != step_id:  # skipped, or a run saved before spans existed
        span = {}
    counters = {key: span.get(key, 0) + (added or {}).get(key, 0) for key in COUNTS}
    finished = now()
    started = span.get("started") or (finished if outcome == "skipped" else None)
    step = spec.step(step_id)
    instructions, references = shown_chars(spec, step_id, values)
    pauses = counters["pauses"]
    return entry("span", step_id, type=step.type, outcome=outcome, started=started,
                 finished=finished, duration_ms=_ms(started, finished), pauses=pauses,
                 instructions_chars=instructions * pauses, references_chars=references * pauses,
                 effects={"requested": counters["requested"],
                          "completed": counters["completed"]},
                 postconditions={"passed": counters["passed"], "failed": counters["failed"]})


def open_span(spec: WorkflowSpec, values: Mapping[str, Any]) -> dict[str, Any] | None:
    """The span of the step the run is at, as far as it goes (``finished`` is None)."""
    span = current(values)
    cursor = values.get("cursor")
    if not cursor or span.get("step") != cursor or values.get("status") in (
            "completed", "aborted"):
        return None
    record = closed(spec, cursor, values, None, "open")
    return {**record, "finished": None, "duration_ms": None}


def shown_chars(spec: WorkflowSpec, step_id: str, values: Mapping[str, Any]) -> tuple[int, int]:
    """The characters of one showing of the step: instructions as rendered, references."""
    from canal.nodes.lookup import run_lookup
    from canal.spec.templates import render_lenient

    step = spec.step(step_id)
    instructions = render_lenient(step.body, run_lookup(values, None))
    return len(instructions), sum(len(doc.text) for doc in step.references)


def report(log: list[dict[str, Any]]) -> None:
    """Hand every span in ``log`` to LangChain's callbacks as a ``canal.span:<step>`` run
    whose metadata holds the span's fields (``canal_span_<field>``), inside the running
    node's span. With no handler listening (none in the running config, LangSmith tracing
    off) nothing is made: a run of its own costs about a millisecond a step."""
    spans = [e for e in log if e.get("kind") == "span"]
    if not spans or not _listened():
        return
    from langchain_core.runnables import RunnableLambda

    for span in spans:
        metadata = {"canal_span": True, "canal_step": span["step"]}
        for key, value in span.items():
            if key in ("kind", "step", "at"):
                continue
            if isinstance(value, Mapping):
                metadata |= {f"canal_span_{key}_{k}": v for k, v in value.items()}
            else:
                metadata[f"canal_span_{key}"] = value
        RunnableLambda(_same, name=f"canal.span:{span['step']}").invoke(
            span, config={"metadata": metadata, "tags": ["canal", "canal:span",
                                                         f"canal:step:{span['step']}"]})


def _listened() -> bool:
    """Whether a callback handler would see a run made now: one in the running node's
    config, or LangSmith tracing switched on (which adds its tracer to every run)."""
    from langchain_core.runnables.config import var_child_runnable_config

    try:
        from langchain_core.tracers.context import _tracing_v2_is_enabled
    except ImportError:  # moved in another langchain_core: assume someone listens
        return True
    callbacks = (var_child_runnable_config.get() or {}).get("callbacks")
    handlers = getattr(callbacks, "handlers", callbacks)
    return bool(handlers) or bool(_tracing_v2_is_enabled())


def _same(value: Any) -> Any:
    return value


def _ms(started: str | None, finished: str) -> int | None:
    if not started:
        return None
    delta = datetime.fromisoformat(finished) - datetime.fromisoformat(started)
    return max(0, round(delta.total_seconds() * 1000))
