"""Static checks of ``when`` and ``verify``: each problem names the file, the key and says
what is wrong; a reference to a step that may be skipped is a warning."""

from __future__ import annotations

from typing import Any

import pytest

from canal import Canal
from canal.errors import WorkflowInvalid
from canal.spec import check_workflow
from tests.conftest import write_workflow

ASK = {"type": "interactive", "gate": {"schema": {
    "sku": {"type": "string", "required": True},
    "quantity": {"type": "integer"},
    "speed": {"type": "string", "enum": ["slow", "fast"]},
    "rush": {"type": "boolean"}}}}
CALL = {"type": "automated", "automation": {"tool": "t"}}


def problems(workflows, second: dict[str, Any], third: dict[str, Any] | None = None):
    steps = {"01-ask.md": ASK, "02-two.md": second, "03-three.md": third or CALL}
    _, found = check_workflow(write_workflow(workflows, "w", steps))
    return [(p.path, p.key, p.text, p.message) for p in found if not p.warning]


@pytest.mark.parametrize("when, key, text, message", [
    (3, "when", None, "Input should be a valid dictionary"),
    ({}, "when", None, "a condition maps reference paths"),
    ({"gate.ask": 1}, "when.gate.ask", "gate.ask", "a gate reference names a field"),
    ({"sku": 1}, "when.sku", "sku", "not a reference"),
    ({"state.ask.sku": 1}, "when.state.ask.sku", "state.ask.sku", "unknown namespace 'state'"),
    ({"gate.nope.sku": 1}, "when.gate.nope.sku", "{{gate.nope.sku}}", "no step 'nope'"),
    ({"gate.ask.colour": 1}, "when.gate.ask.colour", "{{gate.ask.colour}}",
     "no such field (known: sku, quantity, speed, rush)"),
    ({"gate.three.x": 1}, "when.gate.three.x", "{{gate.three.x}}",
     "step 'three' has not run yet at this point (it comes after 'two')"),
    ({"result.ask.x": 1}, "when.result.ask.x", "{{result.ask.x}}",
     "step 'ask' is interactive and has no result; only automated steps do"),
    ({"gate.ask.sku": {"bogus": 1}}, "when.gate.ask.sku.bogus", "bogus", "unknown operator"),
    ({"gate.ask.sku": {}}, "when.gate.ask.sku", None, "no operator given"),
    ({"gate.ask.sku": {"in": "abc"}}, "when.gate.ask.sku.in", "'abc'",
     "in takes a list of values"),
    ({"gate.ask.sku": {"exists": "yes"}}, "when.gate.ask.sku.exists", "'yes'",
     "exists takes true or false"),
    ({"gate.ask.sku": {"matches": "("}}, "when.gate.ask.sku.matches", "'('",
     "not a regular expression"),
    ({"gate.ask.quantity": {"gt": True}}, "when.gate.ask.quantity.gt", "True",
     "gt compares with a number or a string"),
    ({"gate.ask.quantity": "ten"}, "when.gate.ask.quantity.equals", "'ten'",
     "the field is integer and string 'ten' can never equal it"),
    ({"gate.ask.speed": {"in": ["slow", "warp"]}}, "when.gate.ask.speed.in",
     "['slow', 'warp']", "'warp' is not one of the field's enum values"),
    ({"gate.ask.rush": {"gte": 1}}, "when.gate.ask.rush.gte", "1",
     "gte compares a boolean field with integer; it can never hold"),
    ({"gate.ask.quantity": {"matches": "1"}}, "when.gate.ask.quantity.matches", "'1'",
     "matches applies to strings; the field is integer"),
    ({"gate.ask.sku": None}, "when.gate.ask.sku.equals", "None",
     "a submitted value is never null; test absence with {exists: false}"),
    ({"any": []}, "when.any", None, "any is a non-empty list of conditions"),
    ({"any": [{"gate.ask.sku": {"lt": []}}]}, "when.any[0].gate.ask.sku.lt", "[]",
     "lt compares with a number or a string"),
    ({"gate.ask.sku": {"equals": "{{gate.nope.x}}"}}, "when.gate.ask.sku.equals",
     "{{gate.nope.x}}", "no step 'nope'"),
])
def test_a_bad_when_is_a_problem_naming_the_file_and_key(workflows, when, key, text, message):
    found = problems(workflows, {**CALL, "when": when})
    assert len(found) == 1, found
    path, got_key, got_text, got_message = found[0]
    assert (path, got_key, got_text) == ("references/02-two.md", key, text)
    assert message in got_message


def test_when_on_any_step_type_is_fine(workflows):
    when = {"gate.ask.rush": True}
    assert problems(workflows, {"type": "notification", "when": when},
                    {"type": "interactive", "when": when}) == []


VERIFY = {"tool": "get", "input_mapping": {"id": "{{result.two.id}}"},
          "expect": {"quantity": "{{gate.ask.quantity}}", "items[0].sku": {"in": ["a"]}}}


@pytest.mark.parametrize("verify, key, text, message", [
    ({"expect": {"a": 1}}, "verify.tool", None, "required key is missing"),
    ({**VERIFY, "tools": "x"}, "verify.tools", None, "unknown key"),
    ({**VERIFY, "expect": {}}, "verify.expect", None, "expect maps at least one path"),
    ({**VERIFY, "expect": {"a..b": 1}}, "verify.expect.a..b", "a..b", "not a path"),
    ({**VERIFY, "expect": {"a": {"near": 1}}}, "verify.expect.a.near", "near",
     "unknown operator"),
    ({**VERIFY, "expect": {"a": "{{result.three.x}}"}}, "verify.expect.a",
     "{{result.three.x}}", "step 'three' has not run yet"),
    ({**VERIFY, "input_mapping": {"id": "{{result.three.id}}"}}, "verify.input_mapping.id",
     "{{result.three.id}}", "step 'three' has not run yet"),
])
def test_a_bad_verify_is_a_problem_naming_the_file_and_key(workflows, verify, key, text,
                                                            message):
    found = problems(workflows, {**CALL, "verify": verify})
    assert len(found) == 1, found
    assert found[0][:3] == ("references/02-two.md", key, text)
    assert message in found[0][3]


def test_verify_belongs_to_an_automated_step_and_to_the_allowed_tools(workflows):
    found = problems(workflows, {"type": "notification", "verify": VERIFY})
    assert [(k, m) for _, k, _, m in found] == [
        ("verify", "only automated steps read back a call")]
    steps = {"01-ask.md": ASK, "02-two.md": {**CALL, "verify": VERIFY}}
    folder = write_workflow(workflows, "fenced", steps,
                            entry={"name": "fenced", "tools": ["t"]})
    assert [(p.key, p.text) for p in check_workflow(folder)[1]] == [("verify.tool", "get")]


def test_a_reference_to_a_step_that_may_be_skipped_is_a_warning(workflows, tmp_path, cli):
    steps = {"01-ask.md": ASK,
             "02-two.md": {**CALL, "when": {"gate.ask.rush": True}},
             "03-three.md": {**CALL, "automation": {"tool": "t", "input_mapping": {
                 "a": "{{result.two.id}}", "b": "{{result.two.other}}"}}},
             "04-four.md": {**CALL, "when": {"result.two.id": {"exists": True}},
                            "automation": {"tool": "t", "input_mapping": {
                                "a": "{{result.two.id}}"}}}}
    write_workflow(workflows, "w", steps)
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:")
    report = canal.validate(["w"])[0]
    assert report["valid"] and report["problems"] == []
    # One warning per referencing step; a step whose own when decides on it gets none.
    assert [(p.path, p.key, p.text) for p in report["warnings"]] == [
        ("references/03-three.md", "automation.input_mapping.a", "{{result.two.id}}")]
    assert "runs only when its condition holds" in report["warnings"][0].message
    canal.start("w", thread_id="t")  # a warning never stops a run


def test_the_cli_reports_warnings_apart_from_problems(cli, project):
    steps = {"01-ask.md": ASK, "02-two.md": {**CALL, "when": {"gate.ask.rush": True}},
             "03-three.md": ({"type": "notification"}, "{{result.two.id}}")}
    write_workflow(project / "workflows", "w", steps)
    result = cli("validate", "w")
    assert result.code == 0 and result.json["status"] == "ok"
    warning = result.json["workflows"][0]["warnings"][0]
    assert warning["severity"] == "warning" and warning["key"] == "body"
    assert warning["problem"].startswith("references/03-three.md: body: {{result.two.id}}: "
                                         "warning: step 'two' runs only when")


def test_an_invalid_when_stops_a_start(workflows, tmp_path):
    write_workflow(workflows, "w", {"01-ask.md": ASK,
                                    "02-two.md": {**CALL, "when": {"gate.ask.sku": {"x": 1}}}})
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:")
    with pytest.raises(WorkflowInvalid) as raised:
        canal.start("w")
    assert [p.key for p in raised.value.problems] == ["when.gate.ask.sku.x"]
