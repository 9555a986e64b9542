"""A canal workflow inside a user's own graph: the parent's checkpointer persists
everything, interrupts surface through the parent, and the resume goes through it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

import pytest
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command

from canal import Canal
from tests.conftest import project_steps, write_workflow

VALID = {"project_name": "billing", "host": "billing.example.com"}


class Parent(TypedDict, total=False):
    request: str
    status: str
    gate: dict[str, Any]
    result: dict[str, Any]
    role: str


def canal_for(workflows: Path, tmp_path: Path, recorder: Any) -> Canal:
    write_workflow(workflows, "create-project", project_steps())
    return Canal(workflows=workflows, home=tmp_path / "home",
                 checkpointer=f"sqlite:///{tmp_path / 'canal.db'}", tools=recorder.client())


def parent_saver(tmp_path: Path) -> SqliteSaver:
    import sqlite3

    return SqliteSaver(sqlite3.connect(tmp_path / "parent.db", check_same_thread=False))


def finish(parent: Any, config: dict[str, Any]) -> dict[str, Any]:
    first = parent.invoke({"request": "new project"}, config)
    (interrupt,) = first["__interrupt__"]
    assert interrupt.value["step"]["id"] == "collect-project-info"
    bad = parent.invoke(Command(resume={"host": "nope"}), config)
    assert bad["__interrupt__"][0].value["missing"] == ["project_name"]
    second = parent.invoke(Command(resume=VALID), config)
    assert second["__interrupt__"][0].value["step"]["instructions"] == \
        "Project 42 has role role-42."
    return parent.invoke(Command(resume=True), config)


def test_added_directly_as_a_node(workflows, tmp_path, recorder):
    """The state keys line up: the parent declares ``status``, ``gate`` and ``result``."""
    workflow = canal_for(workflows, tmp_path, recorder).compile("create-project",
                                                                checkpointer=None)
    builder = StateGraph(Parent)
    builder.add_node("workflow", workflow)
    builder.add_node("after", lambda state: {"role": state["result"]["create-role"]["role_id"]})
    builder.add_edge(START, "workflow")
    builder.add_edge("workflow", "after")
    builder.add_edge("after", END)
    parent = builder.compile(checkpointer=parent_saver(tmp_path))
    done = finish(parent, {"configurable": {"thread_id": "p1"}})
    assert done["status"] == "completed" and done["role"] == "role-42"
    assert [name for name, _ in recorder.calls] == ["create_project", "create_role"]


def test_called_from_a_node_function(workflows, tmp_path, recorder):
    """The parent maps its own keys in (pre-answers) and the results out."""
    workflow = canal_for(workflows, tmp_path, recorder).compile("create-project",
                                                                checkpointer=None)

    def run_workflow(state: Parent) -> dict[str, Any]:
        out = workflow.invoke({})
        return {"status": out["status"], "role": out["result"]["create-role"]["role_id"]}

    builder = StateGraph(Parent)
    builder.add_node("run_workflow", run_workflow)
    builder.add_edge(START, "run_workflow")
    builder.add_edge("run_workflow", END)
    saver = parent_saver(tmp_path)
    parent = builder.compile(checkpointer=saver)
    config = {"configurable": {"thread_id": "p2"}}
    done = finish(parent, config)
    assert done == {"request": "new project", "status": "completed", "role": "role-42"}
    assert [name for name, _ in recorder.calls] == ["create_project", "create_role"]
    # the parent's checkpointer holds the nested run (its namespace), not canal's own file
    namespaces = {c.config["configurable"]["checkpoint_ns"] for c in saver.list(None)}
    assert any(ns.startswith("run_workflow:") for ns in namespaces)


class Mapped(TypedDict, total=False):
    project_name: str
    host: str
    status: str
    gate: dict[str, Any]
    result: dict[str, Any]
    role: str


def mapped_parent(workflows: Path, tmp_path: Path, recorder: Any, style: str) -> Any:
    """A parent that maps its own ``project_name`` and ``host`` into the workflow's
    pre-answers and its ``role`` out of the results, built from scratch each time (a new
    ``Canal``, a new connection to the parent's checkpoints), as a new process would."""
    workflow = canal_for(workflows, tmp_path, recorder).compile("create-project",
                                                                checkpointer=None)

    def answers(state: Mapped) -> dict[str, Any]:
        return {"collect-project-info": {"project_name": state["project_name"],
                                         "host": state["host"]}}

    builder = StateGraph(Mapped)
    if style == "node":  # the parent writes the pre-answers into the shared `gate` key
        builder.add_node("map_in", lambda state: {"gate": answers(state)})
        builder.add_node("workflow", workflow)
        builder.add_edge(START, "map_in")
        builder.add_edge("map_in", "workflow")
        last = "workflow"
    else:
        def run_workflow(state: Mapped) -> dict[str, Any]:
            out = workflow.invoke({"gate": answers(state)})
            return {"status": out["status"], "result": out["result"]}
        builder.add_node("run_workflow", run_workflow)
        builder.add_edge(START, "run_workflow")
        last = "run_workflow"
    builder.add_node("map_out", lambda state: {"role": state["result"]["create-role"]["role_id"]})
    builder.add_edge(last, "map_out")
    builder.add_edge("map_out", END)
    return builder.compile(checkpointer=parent_saver(tmp_path))


@pytest.mark.parametrize("style", ["node", "function"])
def test_the_parent_maps_its_keys_in_and_out_and_resumes_from_a_new_object(
        workflows, tmp_path, recorder, style):
    config = {"configurable": {"thread_id": f"mapped-{style}"}}
    parent = mapped_parent(workflows, tmp_path, recorder, style)
    first = parent.invoke({"project_name": "billing", "host": "billing.example.com"}, config)
    (interrupt,) = first["__interrupt__"]  # pre-answered: straight to the notification
    assert interrupt.value["step"]["instructions"] == "Project 42 has role role-42."
    assert [name for name, _ in recorder.calls] == ["create_project", "create_role"]

    again = mapped_parent(workflows, tmp_path, recorder, style)
    done = again.invoke(Command(resume={"ack": True}), config)
    assert done["status"] == "completed" and done["role"] == "role-42"
    assert [name for name, _ in recorder.calls] == ["create_project", "create_role"]
