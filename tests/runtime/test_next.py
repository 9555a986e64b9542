"""``next``: every envelope and every error says what to call next, with the data it takes."""

from __future__ import annotations

import json

import pytest

from canal import Canal, PythonTools
from canal.errors import RunConflict, RunNotFound, RunStateError, WorkflowNotFound
from tests.conftest import write_workflow

STEPS = {
    "01-ask.md": ({"type": "interactive", "gate": {"schema": {
        "title": {"type": "string", "required": True, "min": 3},
        "priority": {"type": "integer", "enum": [0, 1, 2, 3], "default": 1},
        "pin": {"type": "string", "sensitive": True, "default": "0000"},
        "tags": {"type": "array", "max": 5},
        "code": {"type": "string", "pattern": "^[A-Z]+$", "required": True}}}},
                  "Ask for a ticket."),
    "02-file.md": {"type": "automated", "confirm": True, "automation": {
        "tool": "file", "input_mapping": {"title": "{{gate.ask.title}}"}}},
    "03-told.md": ({"type": "notification"}, "Filed {{result.file.id}}."),
}
GOOD = {"title": "Printer", "code": "IT"}


@pytest.fixture
def canal(workflows, tmp_path):
    write_workflow(workflows, "ticket", STEPS)
    failing: list[bool] = []

    def file(title):
        if failing:
            raise RuntimeError("queue full")
        return {"id": 7}

    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:",
                  tools=PythonTools({"file": file}))
    canal.failing = failing  # type: ignore[attr-defined]
    return canal


def test_an_interactive_step_names_advance_and_describes_each_field(canal):
    env = canal.start("ticket", thread_id="t").to_json()
    assert env["next"] == {
        "command": "advance", "thread_id": "t", "step": "ask",
        "data": {"title": "string 3.. characters, required",
                 "priority": "one of [0, 1, 2, 3], optional, default 1",
                 "pin": "string, optional, sensitive",   # a secret's default is never shown
                 "tags": "array ..5 items, optional",
                 "code": "string, required, matching ^[A-Z]+$"},
        "hint": "submit the fields in data; follow step.instructions"}
    assert "0000" not in json.dumps(env)


def test_a_rejection_keeps_the_same_next_and_says_to_fix_and_resubmit(canal):
    canal.start("ticket", thread_id="t")
    env = canal.advance("t", {"title": "P"}).to_json()
    assert env["status"] == "rejected"
    assert env["errors"] == [{"code": "invalid", "message": "must be at least 3 characters",
                              "field": "title"}]
    assert env["missing"] == ["code"]
    assert env["next"]["command"] == "advance" and env["next"]["step"] == "ask"
    assert env["next"]["hint"].startswith("nothing was applied: fix the fields")


def test_a_confirmation_a_failure_a_notification_and_the_end(canal):
    canal.start("ticket", thread_id="t")
    confirm = canal.advance("t", GOOD).to_json()
    assert confirm["next"]["data"] == {
        "confirm": "boolean, required"}
    assert "step.call" in confirm["next"]["hint"]
    canal.failing.append(True)
    failed = canal.advance("t", {"confirm": True}).to_json()
    assert failed["status"] == "failed"
    assert failed["next"]["data"] == {
        "action": 'one of ["retry", "skip", "abort", "edit"], required',
        "step": "string, optional"}
    assert "or" not in failed["next"]  # not a crash: recover would do nothing
    assert failed["errors"][0]["code"] == "tool_error"
    assert failed["errors"][0]["message"] == "file: RuntimeError: queue full"
    canal.failing.clear()
    told = canal.advance("t", {"action": "retry"}).to_json()
    assert told["step"]["id"] == "file"  # a retry asks for confirmation again
    told = canal.advance("t", {"confirm": True}).to_json()
    assert told["step"]["type"] == "notification"
    assert told["next"] == {"command": "advance", "thread_id": "t", "step": "told", "data": {},
                            "hint": "no data: acknowledge with an empty submission once the "
                                    "user has the message"}
    done = canal.advance("t", {}).to_json()
    assert done["status"] == "completed" and done["next"] is None


def test_an_aborted_run_has_no_next(canal):
    canal.start("ticket", thread_id="t")
    assert canal.abort("t").to_json()["next"] is None


def test_current_history_and_runs_use_the_envelopes_status_words(canal):
    canal.start("ticket", thread_id="t")
    assert canal.current("t").status == "awaiting_input"
    assert canal.history("t")["run_status"] == "awaiting_input"
    assert canal.runs()[0]["status"] == "awaiting_input"


@pytest.mark.parametrize("error, command", [
    (RunNotFound("no run", thread_id="x"), "runs"),
    (WorkflowNotFound("no workflow", workflow="w"), "index"),
    (RunStateError("finished", thread_id="x", status="completed"), "history"),
    (RunConflict("busy", thread_id="x"), "current"),
])
def test_every_error_names_what_to_call_next(error, command):
    document = error.to_json()
    assert document["status"] == "error" and document["next"]["command"] == command


def test_errors_of_the_cli_carry_next_and_are_printed_once(cli, project):
    result = cli("advance", "nope", "--gate-data", "{}")
    assert result.code == 4 and result.stderr == ""
    assert result.json["next"] == {"command": "runs",
                                   "hint": "runs lists the thread ids; start creates a run"}
    started = cli("start", "create-project", "--thread-id", "same")
    again = cli("start", "create-project", "--thread-id", "same")
    assert started.code == 0 and again.code == 6
    assert again.json["next"]["command"] == "start"
    bad = cli("advance", "same", "--gate-data", "{oops")
    assert bad.code == 2 and bad.json["next"]["command"] == "help"


def test_a_sensitive_default_never_leaves_canal(canal):
    from canal.nodes.gate import json_schema

    env = canal.start("ticket", thread_id="t")
    assert "default" not in env.to_json()["step"]["gate"]["pin"]
    assert "default" not in json_schema(canal.workflow("ticket").step("ask").gate)[
        "properties"]["pin"]
    assert env.step.gate["priority"]["default"] == 1
