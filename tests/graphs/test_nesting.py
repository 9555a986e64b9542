"""A canal workflow inside a user's own graph: the parent's checkpointer persists
everything, interrupts surface through the parent, and the resume goes through it."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypedDict

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
