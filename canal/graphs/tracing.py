"""What a LangChain callback handler (LangSmith, Langfuse, a test's recorder) sees of a run.

Every node run is one span (LangGraph's ``on_chain_start``/``on_chain_end``), named after
the node, whose metadata and tags say which step it belongs to::

    metadata  canal_workflow   the workflow's name
              canal_step       the step id (absent on run.begin and abort.compensate)
              canal_step_type  interactive | automated | notification
              canal_node       step | call | verify | recover | begin | compensate
              canal_tool       the tool an automated step calls
    tags      canal, canal:workflow:<name>, canal:step:<id>, canal:type:<type>,
              canal:tool:<tool>

An interactive or notification step is one node (``canal_node: step``); an automated step
is three: ``<id>`` (``step``: it makes the tool call, or first asks for a confirmation when
the step needs one), ``<id>.call`` (``call``: the tool call after a confirmation) and
``<id>.recover`` (``recover``, only when the call failed), and ``<id>.verify``
(``verify``) for a step that reads back its call. Each step also leaves a
``canal.span:<step>`` run whose metadata holds its span (``canal.nodes.spans``). The
facade turns tracing off for a workflow with sensitive fields (``canal.runtime.canal``).
"""

from __future__ import annotations

from typing import Any

from canal.spec.models import StepSpec, WorkflowSpec

_TAGGED = ("workflow", "step", "step_type", "tool")


def node_metadata(spec: WorkflowSpec, step: StepSpec | None, node: str) -> dict[str, Any]:
    """The metadata of a node of ``step`` (None: a node of the whole run) in role ``node``."""
    meta: dict[str, Any] = {"canal_workflow": spec.name, "canal_node": node}
    if step is not None:
        meta |= {"canal_step": step.id, "canal_step_type": step.type}
        if step.automation is not None:
            meta["canal_tool"] = step.automation.tool
    return meta


def node_tags(metadata: dict[str, Any]) -> list[str]:
    """The tags that repeat ``metadata`` for handlers that filter by tag."""
    tags = ["canal"]
    for key in _TAGGED:
        value = metadata.get(f"canal_{key}")
        if value is not None:
            tags.append(f"canal:{key.replace('step_type', 'type')}:{value}")
    return tags


def tag_nodes(graph: Any) -> Any:
    """Give every node of the compiled ``graph`` the tags of its metadata. LangGraph's
    ``add_node`` takes metadata but no tags; a compiled node's ``tags`` go with its span."""
    for node in graph.nodes.values():
        if node.metadata and "canal_node" in node.metadata:
            node.tags = [*(node.tags or ()), *node_tags(node.metadata)]
    return graph
