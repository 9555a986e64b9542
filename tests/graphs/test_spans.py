"""What a LangChain callback handler sees of a run: one span per node, each carrying the
workflow, its step id, step type and (automated steps) tool, as metadata and as tags."""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.callbacks import BaseCallbackHandler
from langgraph.types import Command

from canal import Canal, PythonTools
from tests.conftest import write_workflow

STEPS = {
    "01-ask.md": {"type": "interactive", "gate": {"schema": {
        "name": {"type": "string", "required": True}}}},
    "02-make.md": {"type": "automated", "automation": {
        "tool": "make_project", "input_mapping": {"name": "{{gate.ask.name}}"}}},
    "03-done.md": {"type": "notification"},
}


class Spans(BaseCallbackHandler):
    """Records every chain start: its name, tags and canal's metadata."""

    def __init__(self) -> None:
        self.started: list[tuple[str, list[str], dict[str, Any]]] = []

    def on_chain_start(self, serialized: Any, inputs: Any, *, tags: Any = None,
                       metadata: Any = None, **kwargs: Any) -> None:
        canal = {k: v for k, v in (metadata or {}).items() if k.startswith("canal_")}
        self.started.append((kwargs.get("name"), list(tags or []), canal))

    def nodes(self) -> list[tuple[str, list[str], dict[str, Any]]]:
        """The node runs (not the step spans inside them)."""
        return [s for s in self.started if s[2] and not s[0].startswith("canal.span:")]

    def step_spans(self) -> dict[str, dict[str, Any]]:
        """Each step's ``canal.span:<step>`` run's metadata."""
        return {s[2]["canal_step"]: s[2] for s in self.started
                if s[0].startswith("canal.span:")}


def _graph(workflows, tmp_path) -> Any:
    write_workflow(workflows, "flow", STEPS)
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:",
                  tools=PythonTools({"make_project": lambda name: {"id": 1}}))
    return canal.compile("flow")


def test_each_step_node_is_one_span_with_its_step_metadata_and_tags(workflows, tmp_path):
    graph = _graph(workflows, tmp_path)
    spans = Spans()
    cfg = {"configurable": {"thread_id": "t"}, "callbacks": [spans]}
    graph.invoke({}, cfg)
    graph.invoke(Command(resume={"name": "n"}), cfg)
    by_name = {name: (tags, meta) for name, tags, meta in spans.nodes()}
    names = [name for name, _, meta in spans.nodes()]
    # "ask" runs twice: it pauses, and runs again from its first line when answered.
    # "make" needs no confirmation, so its own node makes the call ("make.call" would
    # make it after a confirmation).
    assert names == ["run.begin", "ask", "ask", "make", "done"]
    assert by_name["run.begin"][1] == {"canal_workflow": "flow", "canal_node": "begin"}
    assert by_name["ask"][1] == {"canal_workflow": "flow", "canal_node": "step",
                                 "canal_step": "ask", "canal_step_type": "interactive"}
    assert by_name["make"][1] == {
        "canal_workflow": "flow", "canal_node": "step", "canal_step": "make",
        "canal_step_type": "automated", "canal_tool": "make_project"}
    assert {"canal", "canal:workflow:flow", "canal:step:make", "canal:type:automated",
            "canal:tool:make_project"} <= set(by_name["make"][0])
    assert by_name["done"][1]["canal_step_type"] == "notification"


def test_spans_are_the_same_under_ainvoke(workflows, tmp_path):
    graph = _graph(workflows, tmp_path)
    spans = Spans()
    cfg = {"configurable": {"thread_id": "t"}, "callbacks": [spans]}

    async def run() -> None:
        await graph.ainvoke({}, cfg)
        await graph.ainvoke(Command(resume={"name": "n"}), cfg)

    asyncio.run(run())
    steps = [(name, meta.get("canal_step"), meta.get("canal_tool"))
             for name, _, meta in spans.nodes()]
    assert steps == [("run.begin", None, None), ("ask", "ask", None), ("ask", "ask", None),
                     ("make", "make", "make_project"), ("done", "done", None)]


def test_each_step_leaves_a_span_run_whose_metadata_holds_its_fields(workflows, tmp_path):
    graph = _graph(workflows, tmp_path)
    spans = Spans()
    cfg = {"configurable": {"thread_id": "t"}, "callbacks": [spans]}
    graph.invoke({}, cfg)
    graph.invoke(Command(resume={"name": "n"}), cfg)
    graph.invoke(Command(resume=True), cfg)
    found = spans.step_spans()
    assert sorted(found) == ["ask", "done", "make"]
    ask, make = found["ask"], found["make"]
    assert ask["canal_span"] is True and ask["canal_span_outcome"] == "completed"
    assert ask["canal_span_pauses"] == 1 and ask["canal_span_effects_requested"] == 0
    assert make["canal_span_effects_requested"] == 1
    assert make["canal_span_effects_completed"] == 1
    assert make["canal_span_pauses"] == 0 and make["canal_span_instructions_chars"] == 0
    assert make["canal_span_postconditions_passed"] == 0
    assert isinstance(make["canal_span_duration_ms"], int)
    assert make["canal_span_started"] <= make["canal_span_finished"]
