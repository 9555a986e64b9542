"""Compile a ``WorkflowSpec`` into a LangGraph ``StateGraph``: one node per step.

Automated steps get a second node, ``<id>.recover``, where a failed call parks the run;
every graph has ``abort.compensate``, which every abort passes through.
Nodes route with ``Command(goto=...)``, so the edges are declared as node destinations.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph import END, START, StateGraph

from canal.graphs.state import RunState
from canal.nodes.automated import RunContext, automated, recovery
from canal.nodes.base import COMPENSATE, call_node, recovery_node
from canal.nodes.confirmation import confirmation
from canal.nodes.compensate import compensate
from canal.nodes.interactive import interactive
from canal.nodes.notification import notification
from canal.spec.models import WorkflowSpec


FACTORIES = {"interactive": interactive, "automated": automated, "notification": notification}


def build_graph(spec: WorkflowSpec, confirm: frozenset[str] = frozenset()) -> StateGraph:
    """The uncompiled graph of ``spec`` (steps in file order); steps in ``confirm`` get a
    confirmation node under their name, in front of ``<id>.call``."""
    builder = StateGraph(RunState, context_schema=RunContext)
    for step in spec.steps:
        next_id = spec.next_id(step.id)
        after = next_id or END
        node = FACTORIES[step.type](step, next_id)
        if step.type == "automated" and step.id in confirm:
            builder.add_node(step.id, confirmation(step), destinations=(
                call_node(step.id), recovery_node(step.id), COMPENSATE))
            builder.add_node(call_node(step.id), node,
                             destinations=(after, recovery_node(step.id)))
            builder.add_node(recovery_node(step.id), recovery(step, next_id),
                             destinations=tuple(dict.fromkeys((step.id, after, COMPENSATE))))
        elif step.type == "automated":
            builder.add_node(step.id, node, destinations=(after, recovery_node(step.id)))
            builder.add_node(recovery_node(step.id), recovery(step, next_id),
                             destinations=tuple(dict.fromkeys((step.id, after, COMPENSATE))))
        else:
            builder.add_node(step.id, node, destinations=tuple(dict.fromkeys((after,
                                                                              COMPENSATE))))
    builder.add_node(COMPENSATE, compensate(spec), destinations=(END,))
    builder.add_edge(START, spec.steps[0].id)
    return builder


def compile_graph(spec: WorkflowSpec, checkpointer: Any = None,
                  confirm: frozenset[str] = frozenset()) -> Any:
    """``build_graph(spec, confirm)`` compiled with ``checkpointer`` (None for a served graph)."""
    return build_graph(spec, confirm).compile(checkpointer=checkpointer, name=spec.name)
