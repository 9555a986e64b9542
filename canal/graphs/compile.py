"""Compile a ``WorkflowSpec`` into a LangGraph ``StateGraph``.

The graph holds every rule (DESIGN.md §8): ``run.begin`` starts or re-enters a run; each
interactive and notification step is one node that pauses and checks its own answers;
each automated step is three nodes, ``<id>`` (confirmation, passing straight through unless
the run asks for one), ``<id>.call`` and ``<id>.recover``, and a fourth, ``<id>.verify``,
when it reads back what its call did; ``abort.compensate`` is where every abort goes. A
node that finishes a step can go to each following step up to the first that has no
``when`` condition (``canal.nodes.route``); those branches are labelled with the
conditions that decide them. Each node's metadata and tags name its step (``canal.graphs.tracing``).
Nodes route with ``Command(goto=...)``, so edges are declared as node
destinations, and ``draw_mermaid()`` shows exactly what runs.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from canal.graphs.guard import guarded
from canal.graphs.state import RunInput, RunState
from canal.graphs.tracing import node_metadata, tag_nodes
from canal.nodes.automated import automated
from canal.nodes.base import BEGIN, COMPENSATE, call_node, recovery_node, verify_node
from canal.nodes.begin import begin
from canal.nodes.compensate import compensate
from canal.nodes.confirmation import confirmation
from canal.nodes.deps import Deps
from canal.nodes.interactive import interactive
from canal.nodes.notification import notification
from canal.nodes.recovery import recovery
from canal.nodes.route import destinations
from canal.nodes.verify import verification
from canal.spec.models import StepSpec, WorkflowSpec


def build_graph(spec: WorkflowSpec, deps: Deps) -> StateGraph:
    """The uncompiled graph of ``spec``, its nodes bound to ``deps``."""
    builder = StateGraph(RunState, input_schema=RunInput)

    def add(name: str, node: Any, *destinations: str | dict[str, str], step: StepSpec | None = None,
            role: str = "step") -> None:
        # Node functions take the state as a plain dict (its values are JSON-plain).
        # A branch without a label is drawn as a plain dotted edge (label None).
        labelled: dict[str, str | None] = {}
        for destination in destinations:
            items = destination.items() if isinstance(destination, dict) else [(destination, "")]
            for target, label in items:
                labelled.setdefault(target, label or None)
        builder.add_node(name, node, destinations=labelled,  # type: ignore[arg-type]
                         metadata=node_metadata(spec, step, role))

    anywhere: list[str] = []
    for step in spec.steps:
        onward = branches(spec, step.id)
        anywhere.append(step.id)
        if step.type == "automated":
            here, call, recover = step.id, call_node(step.id), recovery_node(step.id)
            anywhere.append(recover)
            done = onward
            if step.verify is not None:
                check = verify_node(step.id)
                anywhere.append(check)
                add(check, verification(spec, step, deps), onward, recover, step=step,
                    role="verify")
                done = {check: "verify"}
            calls = automated(spec, step, deps)
            add(here, confirmation(spec, step, deps, calls), call, done, here, recover,
                COMPENSATE, step=step)
            add(call, calls, done, recover, step=step, role="call")
            back = {s.id: "edit" for s in spec.steps[:spec.steps.index(step)]
                    if s.type == "interactive"}
            add(recover, recovery(spec, step, deps), here, onward, recover, COMPENSATE, back,
                *([verify_node(step.id)] if step.verify else []), step=step, role="recover")
        elif step.type == "interactive":  # a rejected answer loops back to the step
            add(step.id, interactive(spec, step, deps), onward, step.id, COMPENSATE, step=step)
        else:
            add(step.id, notification(spec, step, deps), onward, COMPENSATE, step=step)
    add(BEGIN, begin(spec, deps), branches(spec, None), *anywhere, COMPENSATE, END,
        role="begin")
    add(COMPENSATE, compensate(spec, deps), END, role="compensate")
    builder.add_edge(START, BEGIN)
    return builder


def branches(spec: WorkflowSpec, after: str | None) -> dict[str, str]:
    """Where a node that finishes ``after`` (None: the start) can go, labelled with the
    ``when`` conditions that decide it: a step that has one is entered ``when`` it holds,
    and the steps after it are reached by skipping it."""
    out: dict[str, str] = {}
    passed: list[str] = []
    for target in destinations(spec, after):
        step = spec.step(target) if target is not None else None
        label = []
        if passed:
            label.append("skip " + ", ".join(passed))
        if step is not None and step.when is not None:
            label.append("when")
            passed.append(step.id)
        out[target or END] = "; ".join(label)
    return out


def compile_graph(spec: WorkflowSpec, deps: Deps, checkpointer: Any = None) -> Any:
    """``build_graph(spec, deps)`` compiled with ``checkpointer`` (None: the parent graph's
    or LangGraph Server's), refusing input no checkpointer can store (``guard``).

    With a checkpointer of its own, the graph saves every step before the next begins
    (``durability="sync"``, what survives a kill -9) unless the caller asks otherwise.
    """
    graph = guarded(tag_nodes(build_graph(spec, deps).compile(checkpointer=checkpointer,
                                                              name=spec.name)))
    if checkpointer is None:
        return graph
    try:
        from langgraph._internal._constants import CONFIG_KEY_DURABILITY
    except ImportError:  # a LangGraph that moved it: its own default applies
        return graph
    return graph.with_config(configurable={CONFIG_KEY_DURABILITY: "sync"})
