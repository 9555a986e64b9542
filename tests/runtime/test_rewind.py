"""Rewind: a failed step's ``edit`` action and ``canal rewind`` take the run back to an
earlier interactive step, only while nothing after it changed anything."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.types import Command

from canal import Canal, PythonTools, RewindRefused
from tests.conftest import schema, write_workflow

TICKET = {
    "01-ask.md": ({"type": "interactive", "gate": {"schema": {
        "title": {"type": "string", "required": True},
        "priority": {"type": "integer", "required": True}}}}, "Ask for the ticket."),
    "02-create.md": {"type": "automated", "automation": {"tool": "create", "input_mapping": {
        "title": "{{gate.ask.title}}", "priority": "{{gate.ask.priority}}"}}},
    "03-done.md": ({"type": "notification"}, "Ticket {{result.create.id}}."),
}


@pytest.fixture
def tickets(workflows, tmp_path):
    calls: list[dict[str, Any]] = []

    def create(title: str, priority: int) -> dict[str, Any]:
        calls.append({"title": title, "priority": priority})
        if priority > 3:
            raise ValueError("priority must be 0-3")
        return {"id": len(calls)}

    write_workflow(workflows, "ticket", TICKET)
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:",
                  tools=PythonTools({"create": create}))
    canal.calls = calls  # type: ignore[attr-defined]
    return canal


def test_edit_goes_back_to_the_step_that_supplied_the_bad_data(tickets):
    tickets.start("ticket", thread_id="t")
    failed = tickets.advance("t", {"title": "Printer", "priority": 7})
    assert failed.status == "failed"
    assert failed.step.gate["action"]["enum"] == ["retry", "skip", "abort", "edit"]
    back = tickets.advance("t", {"action": "edit"})
    assert back.status == "awaiting_input" and back.step.id == "ask"
    assert "ask" not in tickets.values("t")["gate"]  # the bad answer is no longer current
    done = tickets.advance("t", {"title": "Printer", "priority": 2})
    assert done.step.id == "done" and done.step.instructions == "Ticket 2."
    assert tickets.calls == [{"title": "Printer", "priority": 7},
                             {"title": "Printer", "priority": 2}]
    history = tickets.history("t")
    kinds = [(e["kind"], e["step"]) for e in history["entries"]]
    # The abandoned attempt stays in the history.
    assert kinds == [("start", None), ("submit", "ask"), ("tool", "create"),
                     ("action", "create"), ("rewind", "ask"), ("submit", "ask"),
                     ("tool", "create")]
    rewind = history["entries"][4]
    assert rewind["from"] == "create" and rewind["abandoned"] == ["ask"]
    keys = [e["key"] for e in history["entries"] if e["kind"] == "tool"]
    assert keys == ["t:create:0", "t:create:1"]  # a new attempt: nothing replayed


def test_the_compiled_graph_takes_edit_on_its_own(tickets):
    graph = tickets.compile("ticket")
    config = {"configurable": {"thread_id": "g"}}
    graph.invoke({}, config)
    graph.invoke(Command(resume={"title": "T", "priority": 9}), config)
    out = graph.invoke(Command(resume={"action": "edit", "step": "ask"}), config)
    assert out["__interrupt__"][0].value["step"]["id"] == "ask"
    assert graph.get_state(config).values["cursor"] == "ask"


def test_rewind_at_any_pause_and_its_refusals(tickets):
    tickets.start("ticket", thread_id="t")
    tickets.advance("t", {"title": "Printer", "priority": 1})
    at_done = tickets.current("t")
    assert at_done.step.id == "done"
    with pytest.raises(RewindRefused) as refused:
        tickets.rewind("t", "ask")
    assert str(refused.value) == (
        "cannot go back to 'ask': after it, create completed a call that changed something, "
        "and answering again would repeat it; abort stops the run (no step there declares a "
        "compensation)")
    assert refused.value.to_json()["next"]["command"] == "current"
    assert tickets.current("t").step.id == "done"  # nothing changed
    with pytest.raises(RewindRefused, match="'create' is not an interactive step"):
        tickets.rewind("t", "create")
    with pytest.raises(RewindRefused, match="'nope' is not an interactive step"):
        tickets.rewind("t", "nope")


def test_rewind_from_a_confirmation_drops_the_answer_and_asks_again(workflows, tmp_path):
    steps = {**TICKET, "02-create.md": {**TICKET["02-create.md"], "confirm": True}}
    write_workflow(workflows, "ticket", steps)
    calls: list[Any] = []
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:",
                  tools=PythonTools({"create": lambda **kw: calls.append(kw) or {"id": 1}}))
    canal.start("ticket", thread_id="t")
    asking = canal.advance("t", {"title": "Wrong", "priority": 1})
    assert asking.step.call == {"tool": "create", "arguments": {"title": "Wrong", "priority": 1}}
    back = canal.rewind("t", "ask")
    assert back.step.id == "ask" and back.status == "awaiting_input"
    confirm = canal.advance("t", {"title": "Right", "priority": 1})
    assert confirm.step.call["arguments"]["title"] == "Right"
    assert canal.advance("t", {"confirm": True}).step.id == "done"
    assert calls == [{"title": "Right", "priority": 1}]


def test_an_edit_past_a_call_that_changed_something_is_refused_and_changes_nothing(
        workflows, tmp_path):
    steps = {
        "01-ask.md": TICKET["01-ask.md"],
        "02-reserve.md": {"type": "automated", "automation": {"tool": "reserve"},
                          "compensate": {"tool": "release"}},
        "03-create.md": TICKET["02-create.md"],
    }
    write_workflow(workflows, "ticket", steps)
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:",
                  tools=PythonTools({"reserve": lambda: {"ok": True}, "release": lambda: {},
                                     "create": lambda **kw: 1 / 0}))
    canal.start("ticket", thread_id="t")
    assert canal.advance("t", {"title": "T", "priority": 1}).status == "failed"
    before = canal.values("t")
    env = canal.advance("t", {"action": "edit"}).to_json()
    assert env["status"] == "rejected"
    assert env["errors"] == [{
        "code": "rewind_refused", "field": "action",
        "message": "cannot go back to 'ask': after it, reserve completed a call that changed "
                   "something, and answering again would repeat it; abort runs the "
                   "compensations reserve (release)"}]
    assert canal.values("t") == before


@pytest.fixture
def desk(tmp_path, toolbox):
    """A real MCP server: a read-only lookup, then a create that refuses priority 7."""
    toolbox.add("desk", [
        {"name": "lookup", "annotations": {"readOnlyHint": True}},
        {"name": "create", "behavior": "error", "result": "priority must be 0-3",
         "inputSchema": schema("title", title="string")}])
    steps = {"01-ask.md": TICKET["01-ask.md"],
             "02-lookup.md": {"type": "automated", "automation": {
                 "tool": "lookup", "input_mapping": {"title": "{{gate.ask.title}}"}}},
             "03-create.md": TICKET["02-create.md"],
             "04-done.md": TICKET["03-done.md"]}
    write_workflow(tmp_path / "workflows", "ticket", steps)
    canal = Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
                  mcp_config=tmp_path / ".mcp.json")
    canal.discover()
    yield canal
    canal.close()


def test_an_edit_may_pass_over_a_read_only_call_on_a_real_server(desk, toolbox):
    desk.start("ticket", thread_id="t")
    assert desk.advance("t", {"title": "Printer", "priority": 7}).status == "failed"
    toolbox.set_tools("desk", [{"name": "lookup", "annotations": {"readOnlyHint": True}},
                               {"name": "create"}])
    assert desk.advance("t", {"action": "edit"}).step.id == "ask"
    assert desk.advance("t", {"title": "Printer", "priority": 2}).step.id == "done"
    assert [(c["tool"], c["arguments"].get("priority")) for c in toolbox.calls("desk")] == [
        ("lookup", None), ("create", 7), ("lookup", None), ("create", 2)]


def test_the_cli_rewinds_and_refuses_with_exit_6(cli, project):
    thread = cli("start", "create-project").json["thread_id"]
    moved = cli("rewind", thread, "collect-project-info")
    assert moved.code == 0 and moved.json["step"]["id"] == "collect-project-info"
    refused = cli("rewind", thread, "summary")
    assert refused.code == 6 and refused.json["error"]["code"] == "rewind_refused"
    assert refused.stderr == ""
