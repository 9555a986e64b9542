"""``when`` conditions: real routing in the compiled graph, skipped steps, every operator."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.types import Command

from canal import Canal, PythonTools
from canal.spec.conditions import ABSENT, Clause, json_equal, passes
from tests.conftest import schema, write_workflow

ORDER = {"01-ask.md": {"type": "interactive", "gate": {"schema": {
    "sku": {"type": "string", "required": True},
    "quantity": {"type": "integer", "required": True, "min": 1},
    "rush": {"type": "boolean", "required": True},
    "note": {"type": "string"}}}}}


def order_steps() -> dict[str, Any]:
    return {**ORDER,
            "02-reserve.md": {"type": "automated", "automation": {
                "tool": "reserve", "input_mapping": {
                    "sku": "{{gate.ask.sku}}", "quantity": "{{gate.ask.quantity}}"}}},
            "03-express.md": {"type": "automated", "when": {"gate.ask.rush": True},
                              "automation": {"tool": "ship", "input_mapping": {
                                  "reservation": "{{result.reserve.id}}", "speed": "express"}}},
            "04-standard.md": {"type": "automated", "when": {"gate.ask.rush": {"not_equals": True}},
                               "automation": {"tool": "ship", "input_mapping": {
                                   "reservation": "{{result.reserve.id}}", "speed": "standard",
                                   "after": "{{result.express.id}}"}}},
            "05-done.md": ({"type": "notification"},
                           "Express: {{result.express.id}}. Standard: {{result.standard.id}}.")}


@pytest.fixture
def shop(tmp_path, toolbox):
    """The order workflow over a real MCP server whose calls are logged."""
    toolbox.add("shop", [
        {"name": "reserve", "behavior": "store",
         "inputSchema": schema("sku", "quantity", sku="string", quantity="integer")},
        {"name": "ship", "behavior": "store"},
        {"name": "get", "behavior": "fetch", "annotations": {"readOnlyHint": True}}])
    write_workflow(tmp_path / "workflows", "order", order_steps())
    canal = Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
                  mcp_config=tmp_path / ".mcp.json")
    canal.discover()
    yield canal
    canal.close()


@pytest.mark.parametrize("rush, speed", [(True, "express"), (False, "standard")])
def test_each_branch_calls_only_its_tool(shop, toolbox, rush, speed):
    shop.start("order", thread_id="t")
    env = shop.advance("t", {"sku": "A-1", "quantity": 3, "rush": rush})
    calls = toolbox.calls("shop")
    assert [(c["tool"], c["arguments"].get("speed")) for c in calls] == [
        ("reserve", None), ("ship", speed)]
    assert [e["step"] for e in env.executed] == ["reserve", speed]
    skipped = "standard" if rush else "express"
    # The skipped step's values are absent: no argument, empty text.
    assert "after" not in calls[1]["arguments"]
    assert env.step.id == "done"
    assert env.step.instructions == ("Express: 2. Standard: ." if rush else
                                     "Express: . Standard: 2.")
    done = {c["step"]: c for c in shop.current("t").completed}
    assert done[skipped] == {"step": skipped, "type": "automated", "skipped": True,
                             "reason": "when"}
    history = shop.history("t")
    assert [(e["kind"], e["step"]) for e in history["entries"] if e["kind"] == "skip"] == [
        ("skip", skipped)]
    spans = {s["step"]: s for s in history["spans"]}
    assert spans[skipped]["outcome"] == "skipped"
    assert spans[skipped]["effects"] == {"requested": 0, "completed": 0}
    assert spans[speed]["effects"] == {"requested": 1, "completed": 1}
    assert spans["ask"]["pauses"] == 1 and isinstance(spans["ask"]["duration_ms"], int)
    assert spans["ask"]["started"] <= spans["ask"]["finished"]
    assert spans["done"]["finished"] is None and spans["done"]["outcome"] == "open"


def test_the_graph_shows_the_branches_with_their_labels(shop):
    mermaid = shop.graph("order")
    assert "reserve\\2ecall -. &nbsp;when&nbsp; .-> express;" in mermaid
    assert "reserve\\2ecall -. &nbsp;skip express; when&nbsp; .-> standard;" in mermaid
    assert "reserve\\2ecall -. &nbsp;skip express, standard&nbsp; .-> done;" in mermaid
    assert "express\\2ecall -. &nbsp;when&nbsp; .-> standard;" in mermaid
    assert "standard\\2ecall -.-> done;" in mermaid


def _flow(workflows, tmp_path, when: dict[str, Any], calls: list[Any]) -> Canal:
    steps = {**ORDER,
             "02-act.md": {"type": "automated", "when": when,
                           "automation": {"tool": "act",
                                          "input_mapping": {"sku": "{{gate.ask.sku}}"}}},
             "03-done.md": {"type": "notification"}}
    write_workflow(workflows, "w", steps)
    return Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:",
                 tools=PythonTools({"act": lambda **kw: calls.append(kw) or {"ok": True}}))


SUBMITTED = {"sku": "AB-12", "quantity": 10, "rush": False}


@pytest.mark.parametrize("when, runs", [
    ({"gate.ask.sku": "AB-12"}, True),
    ({"gate.ask.sku": {"equals": "AB-13"}}, False),
    ({"gate.ask.quantity": {"equals": 10.0}}, True),          # JSON numbers: 10 == 10.0
    ({"gate.ask.rush": {"equals": True}}, False),
    ({"gate.ask.sku": {"not_equals": "AB-13"}}, True),
    ({"gate.ask.rush": {"not_equals": False}}, False),
    ({"gate.ask.sku": {"in": ["X", "AB-12"]}}, True),
    ({"gate.ask.quantity": {"in": [1, 2]}}, False),
    ({"gate.ask.quantity": {"not_in": [1, 2]}}, True),
    ({"gate.ask.sku": {"not_in": ["AB-12"]}}, False),
    ({"gate.ask.quantity": {"gt": 9}}, True),
    ({"gate.ask.quantity": {"gt": 10}}, False),
    ({"gate.ask.quantity": {"gte": 10}}, True),
    ({"gate.ask.quantity": {"gte": 11}}, False),
    ({"gate.ask.quantity": {"lt": 11}}, True),
    ({"gate.ask.quantity": {"lt": 10}}, False),
    ({"gate.ask.quantity": {"lte": 10}}, True),
    ({"gate.ask.quantity": {"lte": 9.5}}, False),
    ({"gate.ask.sku": {"gt": "AA"}}, True),                    # two strings compare
    ({"gate.ask.sku": {"matches": "^[A-Z]{2}-[0-9]+$"}}, True),
    ({"gate.ask.sku": {"matches": "^[0-9]"}}, False),
    ({"gate.ask.note": {"exists": False}}, True),              # not submitted: absent
    ({"gate.ask.note": {"exists": True}}, False),
    ({"gate.ask.note": {"not_equals": "x"}}, True),            # absent equals nothing
    ({"gate.ask.note": {"equals": "x"}}, False),
    ({"gate.ask.quantity": {"gte": 5, "lte": 10}}, True),      # operators of one entry: all
    ({"gate.ask.quantity": {"gte": 5}, "gate.ask.rush": True}, False),  # entries: all
    ({"any": [{"gate.ask.rush": True}, {"gate.ask.quantity": {"gt": 5}}]}, True),
    ({"any": [{"gate.ask.rush": True}, {"gate.ask.quantity": {"gt": 50}}]}, False),
    ({"gate.ask.sku": "AB-12", "any": [{"gate.ask.rush": True}]}, False),
])
def test_every_operator_decides_whether_the_step_calls(workflows, tmp_path, when, runs):
    calls: list[Any] = []
    canal = _flow(workflows, tmp_path, when, calls)
    assert canal.validate(["w"])[0]["problems"] == []
    canal.start("w", thread_id="t")
    env = canal.advance("t", SUBMITTED)
    assert env.step.id == "done"
    assert calls == ([{"sku": "AB-12"}] if runs else [])


def test_a_condition_on_a_skipped_step_sees_its_values_absent(workflows, tmp_path):
    calls: list[tuple[str, dict]] = []
    steps = {**ORDER,
             "02-first.md": {"type": "automated", "when": {"gate.ask.rush": True},
                             "automation": {"tool": "first"}},
             "03-second.md": {"type": "automated", "when": {"result.first.id": {"exists": False}},
                              "automation": {"tool": "second", "input_mapping": {
                                  "first": "{{result.first.id}}", "list": ["{{result.first.id}}"],
                                  "text": "after <{{result.first.id}}>"}}},
             "04-third.md": {"type": "automated", "when": {"result.first.id": {"not_equals": 1}},
                             "automation": {"tool": "third"}}}
    write_workflow(workflows, "w", steps)

    def recording(name: str) -> Any:
        return lambda **kw: calls.append((name, kw)) or {"id": 1}

    tools = {name: recording(name) for name in ("first", "second", "third")}
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:",
                  tools=PythonTools(tools))
    canal.start("w", thread_id="t")
    env = canal.advance("t", SUBMITTED)
    assert env.status == "completed"
    assert calls == [("second", {"list": [None], "text": "after <>"}), ("third", {})]
    # A second run takes the other branch: first runs, second is skipped, third sees id 1.
    calls.clear()
    canal.start("w", thread_id="u")
    canal.advance("u", {**SUBMITTED, "rush": True})
    assert [name for name, _ in calls] == ["first"]


def test_a_condition_reads_a_result_and_an_operand_may_reference_one(workflows, tmp_path):
    steps = {**ORDER,
             "02-stock.md": {"type": "automated", "automation": {"tool": "stock"}},
             "03-reserve.md": {"type": "automated",
                               "when": {"result.stock.available": {
                                   "gte": "{{gate.ask.quantity}}"}},
                               "automation": {"tool": "reserve"}},
             "04-backorder.md": {"type": "automated",
                                 "when": {"result.stock.available": {
                                     "lt": "{{gate.ask.quantity}}"}},
                                 "automation": {"tool": "backorder"}}}
    write_workflow(workflows, "w", steps)
    calls: list[str] = []
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:",
                  tools=PythonTools({
                      "stock": lambda: {"available": 7},
                      "reserve": lambda: calls.append("reserve") or {},
                      "backorder": lambda: calls.append("backorder") or {}}))
    assert canal.validate(["w"])[0]["problems"] == []
    for thread, quantity, called in (("a", 7, "reserve"), ("b", 8, "backorder")):
        calls.clear()
        canal.start("w", thread_id=thread)
        assert canal.advance(thread, {**SUBMITTED, "quantity": quantity}).status == "completed"
        assert calls == [called]


def test_the_first_step_may_be_skipped_and_a_run_may_skip_to_its_end(workflows, tmp_path):
    steps = {"01-only.md": {"type": "notification", "when": {"gate.never.x": 1}}}
    write_workflow(workflows, "bad", steps)
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:")
    problems = canal.validate(["bad"])[0]["problems"]
    assert [p.key for p in problems] == ["when.gate.never.x"]  # no such step
    steps = {**ORDER, "02-tail.md": {"type": "notification", "when": {"gate.ask.rush": True}}}
    write_workflow(workflows, "w", steps)
    canal.start("w", thread_id="t")
    assert canal.advance("t", SUBMITTED).status == "completed"


def test_the_compiled_graph_alone_routes_and_records_the_skip(workflows, tmp_path):
    calls: list[Any] = []
    canal = _flow(workflows, tmp_path, {"gate.ask.rush": True}, calls)
    graph = canal.compile("w")
    config = {"configurable": {"thread_id": "g"}}
    graph.invoke({}, config)
    out = graph.invoke(Command(resume=SUBMITTED), config)
    assert out["__interrupt__"][0].value["step"]["id"] == "done"
    state = graph.get_state(config).values
    assert state["skipped"] == {"act": "when"} and "act" not in state["result"]
    assert calls == []


@pytest.mark.parametrize("operator, operand, actual, expected", [
    ("equals", 1, 1.0, True), ("equals", True, 1, False), ("equals", "1", 1, False),
    ("equals", {"a": [1]}, {"a": [1.0]}, True), ("equals", None, None, True),
    ("not_equals", 1, ABSENT, True), ("in", [1], ABSENT, False),
    ("not_in", [True], 1, True), ("gt", 1, "2", False), ("gt", "a", "b", True),
    ("gte", 1, True, False), ("lt", 2, 1, True), ("lte", 1, ABSENT, False),
    ("matches", "b", "abc", True), ("matches", "b", 5, False), ("matches", "^(a|a)*$",
                                                                 "a" * 40 + "b", False),
    ("exists", True, None, True), ("exists", False, ABSENT, True), ("exists", True, ABSENT, False),
])
def test_operator_semantics_with_json_types(operator, operand, actual, expected):
    assert passes(Clause("k", ("k",), operator, operand), actual, operand) is expected


def test_json_equality_never_mixes_booleans_and_numbers():
    assert json_equal([True, 1], [True, 1.0])
    assert not json_equal([True], [1]) and not json_equal({"a": 0}, {"a": False})
    assert not json_equal({"a": 1}, {"a": 1, "b": 2})
