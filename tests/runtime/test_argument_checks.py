"""Arguments are checked against the tool's schema and rules before every workflow call,
as ``canal call`` checks them: a value the tool refuses is never sent, whatever the gate
let through. A real MCP server (tests/servers/toolbox.py) shows that nothing reached it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from canal import Canal
from tests.conftest import schema, write_workflow

PRIORITY = {"type": "integer", "enum": [0, 1, 2, 3]}
TOOLS = [
    {"name": "create_ticket",
     "inputSchema": schema("title", "priority", "request_id", title="string",
                           priority=PRIORITY, request_id="string")},
    {"name": "assign", "inputSchema": schema("team", team="string")},
    {"name": "get_ticket", "annotations": {"readOnlyHint": True},
     "inputSchema": schema("id", id="integer")},
    {"name": "close_ticket", "inputSchema": schema("id", id="integer")},
]
ENUM_ERROR = {"field": "priority", "message": "must be one of: 0, 1, 2, 3"}


def ticket_steps(priority: dict[str, Any] | None = None,
                 mapping: dict[str, Any] | None = None, **step: Any) -> dict[str, Any]:
    """Ask for a title and a priority (a gate field without the tool's enum unless
    ``priority`` says otherwise), then create the ticket with them."""
    if mapping is None:
        mapping = {"title": "{{gate.ask.title}}", "priority": "{{gate.ask.priority}}"}
    return {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "title": {"type": "string", "required": True},
            "priority": priority or {"type": "integer", "required": True}}}},
        "02-create.md": {"type": "automated", "automation": {
            "tool": "create_ticket", "input_mapping": mapping,
            "idempotency_key": "request_id"}, **step},
        "03-done.md": ({"type": "notification"}, "Done."),
    }


@pytest.fixture
def desk(tmp_path: Path, toolbox: Any) -> Any:
    toolbox.add("desk", TOOLS)
    with open_canal(tmp_path) as canal:
        canal.discover()
    return toolbox


def open_canal(root: Path) -> Canal:
    return Canal(workflows=root / "workflows", home=root / ".canal",
                 mcp_config=root / ".mcp.json")


def workflow(root: Path, steps: dict[str, Any], name: str = "ticket") -> None:
    write_workflow(root / "workflows", name, steps)


def refused(env: Any) -> dict[str, Any]:
    """The failure of a run parked because its arguments did not fit (asserted so)."""
    assert env.status == "failed" and env.step.id == "create"
    assert env.step.gate["action"]["enum"] == ["retry", "skip", "abort", "edit"]
    error = env.errors[0]
    assert error["kind"] == "invalid_arguments" and error["code"] == "invalid_arguments"
    assert error["tool"] == "create_ticket" and "nothing was sent" in error["message"]
    return error


def test_a_value_outside_the_tools_enum_is_never_sent(tmp_path, desk):
    workflow(tmp_path, ticket_steps())
    starts = desk.starts("desk")
    with open_canal(tmp_path) as canal:
        canal.start("ticket", thread_id="t")
        env = canal.advance("t", {"title": "printer on fire", "priority": 7})
        error = refused(env)
        assert error["errors"] == [ENUM_ERROR]
        assert "priority: must be one of: 0, 1, 2, 3" in error["message"]
        assert canal.store.call_record("t", "t:create:0") is None  # nothing journaled
    assert desk.calls("desk") == [] and desk.starts("desk") == starts

    with open_canal(tmp_path) as canal:  # another session: nothing changed, same refusal
        again = refused(canal.advance("t", {"action": "retry"}))
        assert again["errors"] == [ENUM_ERROR] and again["key"] == "t:create:1"
        assert canal.store.call_record("t", "t:create:1") is None
    assert desk.calls("desk") == [] and desk.starts("desk") == starts

    with open_canal(tmp_path) as canal:
        env = canal.advance("t", {"action": "skip"})
        assert env.status == "awaiting_input" and env.step.id == "done"
        assert "create" not in canal.values("t")["result"]
        assert canal.advance("t", {}).status == "completed"
    assert desk.calls("desk") == [] and desk.starts("desk") == starts


def test_abort_after_a_refusal_ends_the_run_without_a_call(tmp_path, desk):
    workflow(tmp_path, ticket_steps())
    with open_canal(tmp_path) as canal:
        canal.start("ticket", thread_id="t")
        refused(canal.advance("t", {"title": "t", "priority": 7}))
        assert canal.advance("t", {"action": "abort"}).status == "aborted"
    assert desk.calls("desk") == []


def test_arguments_that_fit_are_sent_with_the_idempotency_key(tmp_path, desk):
    workflow(tmp_path, ticket_steps())
    with open_canal(tmp_path) as canal:
        canal.start("ticket", thread_id="t")
        env = canal.advance("t", {"title": "printer on fire", "priority": 3})
    assert env.status == "awaiting_input" and env.step.id == "done"
    assert [c["arguments"] for c in desk.calls("desk")] == [
        {"title": "printer on fire", "priority": 3, "request_id": "t:create:0"}]


@pytest.mark.parametrize("priority, mapping, data, errors", [
    ({"type": "string", "required": True}, None, {"title": "t", "priority": "high"},
     [{"field": "priority", "message": "expected integer, got string"}]),
    (None, {"priority": "{{gate.ask.priority}}"}, {"title": "t", "priority": 1},
     [{"field": "title", "message": "required, but missing or empty"}]),
    (None, {"title": "  ", "priority": "{{gate.ask.priority}}"}, {"title": "t", "priority": 1},
     [{"field": "title", "message": "required, but missing or empty"}]),
    (None, {"title": "{{gate.ask.title}}", "priority": 9}, {"title": "t", "priority": 1},
     [ENUM_ERROR]),
], ids=["wrong-type", "missing", "blank", "constant"])
def test_each_kind_of_misfit_is_listed_per_argument(tmp_path, desk, priority, mapping, data,
                                                    errors):
    workflow(tmp_path, ticket_steps(priority, mapping))
    with open_canal(tmp_path) as canal:
        canal.start("ticket", thread_id="t")
        assert refused(canal.advance("t", data))["errors"] == errors
    assert desk.calls("desk") == []


def test_an_empty_string_a_gate_allows_is_still_missing_for_the_tool(tmp_path, desk):
    steps = ticket_steps()
    steps["01-ask.md"]["gate"]["schema"]["title"]["allow_empty"] = True
    workflow(tmp_path, steps)
    with open_canal(tmp_path) as canal:
        canal.start("ticket", thread_id="t")
        error = refused(canal.advance("t", {"title": "", "priority": 1}))
    assert error["errors"] == [{"field": "title", "message": "required, but missing or empty"}]
    assert desk.calls("desk") == []


def test_a_rules_enum_is_enforced_on_workflow_calls(tmp_path, desk):
    workflow(tmp_path, {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "team": {"type": "string", "required": True}}}},
        "02-assign.md": {"type": "automated", "automation": {
            "tool": "assign", "input_mapping": {"team": "{{gate.ask.team}}"}}},
    }, name="assign")
    rules = tmp_path / ".canal" / "tools" / "assign.rules"
    rules.write_text(rules.read_text() + "ENUM:team:red,blue\n")
    with open_canal(tmp_path) as canal:
        canal.start("assign", thread_id="t")
        env = canal.advance("t", {"team": "green"})
        assert env.status == "failed" and env.errors[0]["kind"] == "invalid_arguments"
        assert env.errors[0]["errors"] == [{"field": "team",
                                            "message": "must be one of: red, blue"}]
        assert desk.calls("desk") == []
        # the rule is fixed by hand: retry sends the call
        rules.write_text(rules.read_text().replace("red,blue", "red,blue,green"))
        assert canal.advance("t", {"action": "retry"}).status == "completed"
    assert [c["arguments"] for c in desk.calls("desk")] == [{"team": "green"}]


def test_a_read_back_and_a_compensation_that_do_not_fit_are_not_sent(tmp_path, desk):
    workflow(tmp_path, ticket_steps(
        verify={"tool": "get_ticket", "input_mapping": {"id": "{{result.create.arguments.title}}"},
                "expect": {"tool": "get_ticket"}},
        compensate={"tool": "close_ticket", "input_mapping": {"id": "{{gate.ask.title}}"}}))
    with open_canal(tmp_path) as canal:
        canal.start("ticket", thread_id="t")
        env = canal.advance("t", {"title": "t", "priority": 1})
        assert env.status == "failed" and env.errors[0]["kind"] == "postcondition"
        assert env.errors[0]["message"].startswith(
            "the read-back was not made: the arguments for get_ticket do not fit")
        assert "id: expected integer, got string" in env.errors[0]["message"]
        aborted = canal.advance("t", {"action": "abort"})
    assert aborted.status == "aborted"
    undo = [e for e in aborted.executed if e.get("compensation")]
    assert undo[0]["ok"] is False and undo[0]["tool"] == "close_ticket"
    assert undo[0]["errors"] == [{"field": "id", "message": "expected integer, got string"}]
    assert [c["tool"] for c in desk.calls("desk")] == ["create_ticket"]


def test_the_plan_shows_the_misfit_and_stops_there(tmp_path, desk):
    workflow(tmp_path, ticket_steps())
    starts = desk.starts("desk")
    with open_canal(tmp_path) as canal:
        canal.start("ticket", thread_id="t")
        plan = canal.plan("t", {"title": "t", "priority": 7})
        assert plan["plan"][0]["errors"] == [ENUM_ERROR]
        assert plan["plan"][0]["arguments"] == {"title": "t", "priority": 7,
                                                "request_id": "t:create:0"}
        assert plan["stops_at"] == "create"
        good = canal.plan("t", {"title": "t", "priority": 2})
        assert "errors" not in good["plan"][0] and good["stops_at"] == "done"
    assert desk.calls("desk") == [] and desk.starts("desk") == starts


def test_a_plan_does_not_judge_arguments_that_wait_for_a_result(tmp_path, desk):
    steps = ticket_steps()
    steps["03-assign.md"] = {"type": "automated", "automation": {
        "tool": "assign", "input_mapping": {"team": "{{result.create.missing_field}}"}}}
    steps["04-done.md"] = steps.pop("03-done.md")
    workflow(tmp_path, steps)
    with open_canal(tmp_path) as canal:
        canal.start("ticket", thread_id="t")
        plan = canal.plan("t", {"title": "t", "priority": 2})
    assert [("errors" in item) for item in plan["plan"]] == [False, False]
    assert plan["stops_at"] == "done"


# -- the static validator: a gate field that feeds a tool argument --------------------------


def warnings_of(canal: Canal, name: str = "ticket") -> list[str]:
    [report] = canal.validate([name])
    assert report["valid"], report["problems"]
    return [f"{w.key}: {w.message}" for w in report["warnings"]]


def test_validate_warns_when_the_gate_lacks_the_tools_enum(tmp_path, desk):
    workflow(tmp_path, ticket_steps())
    with open_canal(tmp_path) as canal:
        assert warnings_of(canal) == [
            "automation.input_mapping.priority: create_ticket accepts only [0, 1, 2, 3] as "
            "priority, which the gate does not enforce: add enum: [0, 1, 2, 3] to gate field "
            "priority"]


def test_no_warning_when_the_gate_has_the_enum(tmp_path, desk):
    workflow(tmp_path, ticket_steps({"type": "integer", "required": True,
                                     "enum": [0, 1, 2, 3]}))
    with open_canal(tmp_path) as canal:
        assert warnings_of(canal) == []


def test_validate_warns_about_a_wider_enum_a_type_and_a_rules_enum(tmp_path, desk):
    workflow(tmp_path, ticket_steps({"type": "integer", "required": True,
                                     "enum": [0, 1, 2, 3, 4]}))
    workflow(tmp_path, ticket_steps({"type": "number", "required": True}), name="typed")
    workflow(tmp_path, {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "team": {"type": "string", "required": True}}}},
        "02-assign.md": {"type": "automated", "automation": {
            "tool": "assign", "input_mapping": {"team": "{{gate.ask.team}}"}}},
    }, name="assign")
    rules = tmp_path / ".canal" / "tools" / "assign.rules"
    rules.write_text(rules.read_text() + "ENUM:team:red,blue\n")
    with open_canal(tmp_path) as canal:
        assert warnings_of(canal) == [
            "automation.input_mapping.priority: gate field priority allows [4], which "
            "create_ticket refuses as priority: keep its enum within [0, 1, 2, 3]"]
        assert warnings_of(canal, "typed") == [
            "automation.input_mapping.priority: create_ticket takes priority as integer, but "
            "gate field priority is number: set type: integer on gate field priority"]
        assert warnings_of(canal, "assign") == [
            'automation.input_mapping.team: assign accepts only ["red", "blue"] as team, '
            'which the gate does not enforce: add enum: ["red", "blue"] to gate field team']


def test_a_tool_the_cache_does_not_know_is_not_checked(tmp_path, desk):
    steps = ticket_steps()
    steps["02-create.md"]["automation"]["tool"] = "unknown_tool"
    workflow(tmp_path, steps)
    with open_canal(tmp_path) as canal:
        [report] = canal.validate(["ticket"])
        assert [p.key for p in report["problems"]] == ["automation.tool"]  # its name is
        assert report["warnings"] == []  # judged, not its arguments
        canal.start("ticket", thread_id="t")
        env = canal.advance("t", {"title": "t", "priority": 7})
    assert env.status == "failed" and env.errors[0]["kind"] == "tool_error"
    assert "no tool 'unknown_tool' in the tool cache" in env.errors[0]["message"]
