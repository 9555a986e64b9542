"""The Canal facade end to end, on every checkpointer (memory, SQLite, PostgreSQL)."""

from __future__ import annotations


import pytest

from canal import Canal, RunNotFound, RunStateError, WorkflowInvalid, WorkflowNotFound
from canal.errors import InvalidName
from tests.conftest import project_steps, write_workflow


def checkpoint_count(canal: Canal, thread_id: str) -> int:
    return len(list(canal.store.saver().list({"configurable": {"thread_id": thread_id}})))


@pytest.fixture
def project(workflows):
    return write_workflow(workflows, "create-project", project_steps())


def test_round_trip_across_canal_objects(project, make_canal, recorder):
    first = make_canal()
    env = first.start("create-project", thread_id="run-1")
    assert env.status == "awaiting_input"
    assert env.step.id == "collect-project-info"
    assert env.step.instructions == "Ask the user for the project name and its domain."
    assert env.step.gate["project_name"] == {"type": "string", "required": True,
                                             "desc": "Project name"}
    assert env.executed == [] and recorder.calls == []
    before = checkpoint_count(first, "run-1")

    rejected = make_canal().advance("run-1", {"host": "Not A Domain", "color": "red"})
    assert rejected.status == "rejected"
    assert rejected.missing == ["project_name"]
    assert rejected.errors == [{"field": "host",
                                "message": r"Service domain: must match ^[a-z0-9.-]+\.[a-z]{2,}$"}]
    assert rejected.dropped == ["color"]
    assert rejected.step.id == "collect-project-info"
    assert checkpoint_count(first, "run-1") == before
    assert recorder.calls == []

    env = make_canal().advance("run-1", {"project_name": "billing", "host": "billing.example.com",
                                         "color": "red"})
    assert env.status == "awaiting_input"
    assert env.dropped == ["color"]
    assert env.step.id == "summary" and env.step.type == "notification"
    assert env.step.instructions == "Project 42 has role role-42."
    assert [(e["step"], e["tool"], e["ok"]) for e in env.executed] == [
        ("create-project", "create_project", True), ("create-role", "create_role", True)]
    assert env.executed[1]["result"] == {"role_id": "role-42"}

    now = make_canal().current("run-1")
    assert now.status == "awaiting_input" and now.step.id == "summary"
    assert now.executed == []
    assert now.completed == [
        {"step": "collect-project-info", "type": "interactive",
         "data": {"project_name": "billing", "host": "billing.example.com",
                  "admins": ["root"], "quota": 10}},
        {"step": "create-project", "type": "automated",
         "result": {"project": {"id": 42, "name": "billing", "admins": ["root"]}}},
        {"step": "create-role", "type": "automated", "result": {"role_id": "role-42"}},
    ]

    done = make_canal().advance("run-1", {})
    assert done.status == "completed" and done.step is None
    with pytest.raises(RunStateError, match="run 'run-1' is completed"):
        make_canal().advance("run-1", {})
    assert [run["status"] for run in make_canal().runs()] == ["completed"]


def test_typed_templates_reach_the_tools(project, make_canal, recorder):
    canal = make_canal()
    canal.start("create-project", thread_id="t")
    canal.advance("t", {"project_name": "p", "host": "p.example.org", "admins": ["ann", "bo"],
                        "quota": 7})
    (_, project_args), (_, role_args) = recorder.calls
    assert project_args == {"name": "p", "host": "p.example.org", "admins": ["ann", "bo"],
                            "quota": 7}
    assert role_args == {"project_id": 42, "first_admin": "ann", "label": "role of p (7)"}


def test_template_looking_data_is_stored_and_passed_verbatim(project, make_canal, recorder):
    canal = make_canal()
    canal.start("create-project", thread_id="t")
    sneaky = "{{result.create-project.project.id}}"
    env = canal.advance("t", {"project_name": sneaky, "host": "a.example.com"})
    assert recorder.calls[0][1]["name"] == sneaky
    assert recorder.calls[1][1]["label"] == f"role of {sneaky} (10)"
    assert make_canal().current("t").completed[0]["data"]["project_name"] == sneaky
    assert env.status == "awaiting_input"


def test_failed_tool_parks_the_run_and_retry_resumes(project, make_canal, recorder):
    recorder.fail.add("create_role")
    canal = make_canal()
    canal.start("create-project", thread_id="t")
    env = canal.advance("t", {"project_name": "p", "host": "a.example.com"})
    assert env.status == "failed"
    assert env.step.id == "create-role"
    assert env.step.gate == {"action": {"type": "string", "required": True,
                                        "desc": env.step.gate["action"]["desc"],
                                        "enum": ["retry", "skip", "abort", "edit"]},
                             "step": {"type": "string", "required": False,
                                      "desc": env.step.gate["step"]["desc"]}}
    assert env.errors == [{"code": "tool_error",
                           "message": "create_role: RuntimeError: role backend down",
                           "step": "create-role", "tool": "create_role",
                           "key": "t:create-role:0", "kind": "tool_error"}]
    assert env.executed[1]["ok"] is False

    assert make_canal().current("t").status == "failed"
    bad = make_canal().advance("t", {"action": "explode"})
    assert bad.status == "rejected"
    assert bad.errors == [{"field": "action", "message": "must be one of: retry, skip, abort, edit"}]

    recorder.fail.clear()
    env = make_canal().advance("t", {"action": "retry"})
    assert env.status == "awaiting_input" and env.step.id == "summary"
    assert [c[0] for c in recorder.calls] == ["create_project", "create_role", "create_role"]


def test_skip_leaves_the_result_empty(project, make_canal, recorder):
    recorder.fail.add("create_role")
    canal = make_canal()
    canal.start("create-project", thread_id="t")
    canal.advance("t", {"project_name": "p", "host": "a.example.com"})
    env = make_canal().advance("t", {"action": "skip"})
    assert env.status == "awaiting_input" and env.step.id == "summary"
    assert env.step.instructions == "Project 42 has role ."
    completed = make_canal().current("t").completed
    assert completed[-1] == {"step": "create-role", "type": "automated", "result": None,
                             "skipped": True}


def test_abort_answer_on_a_failed_step(project, make_canal, recorder):
    recorder.fail.add("create_project")
    canal = make_canal()
    canal.start("create-project", thread_id="t")
    assert canal.advance("t", {"project_name": "p", "host": "a.example.com"}).status == "failed"
    assert make_canal().advance("t", {"action": "abort"}).status == "aborted"
    assert make_canal().current("t").status == "aborted"
    assert [c[0] for c in recorder.calls] == ["create_project"]


def test_abort_while_waiting_and_twice(project, make_canal):
    canal = make_canal()
    canal.start("create-project", thread_id="t")
    env = make_canal().abort("t")
    assert env.status == "aborted" and env.step is None
    with pytest.raises(RunStateError, match="is aborted"):
        make_canal().abort("t")
    with pytest.raises(RunStateError, match="is aborted"):
        make_canal().advance("t", {"project_name": "p", "host": "a.example.com"})


def test_unknown_names_and_taken_thread_ids(project, make_canal):
    canal = make_canal()
    with pytest.raises(RunNotFound, match="no run with thread id 'nope'"):
        canal.current("nope")
    with pytest.raises(WorkflowNotFound, match="no workflow 'missing'"):
        canal.start("missing")
    with pytest.raises(InvalidName):
        canal.start("../create-project")
    with pytest.raises(InvalidName):
        canal.current("a/b")
    canal.start("create-project", thread_id="same")
    with pytest.raises(RunStateError, match="thread id 'same' is already taken"):
        make_canal().start("create-project", thread_id="same")
    assert len(make_canal().runs()) == 1


def test_generated_thread_ids_are_unique_and_listed(project, make_canal):
    canal = make_canal()
    ids = {canal.start("create-project").thread_id for _ in range(3)}
    assert len(ids) == 3 and all(i.startswith("create-project-") for i in ids)
    listed = make_canal().runs()
    assert {r["thread_id"] for r in listed} == ids
    assert {r["status"] for r in listed} == {"awaiting_input"}
    assert {r["step"] for r in listed} == {"collect-project-info"}


def test_invalid_workflow_does_not_start(workflows, make_canal):
    steps = project_steps()
    steps["02-create-project.md"][0]["automation"]["input_mapping"]["host"] = (
        "{{gate.collect-project-info.hots}}")
    write_workflow(workflows, "broken", steps)
    with pytest.raises(WorkflowInvalid) as caught:
        make_canal().start("broken")
    assert [p.message for p in caught.value.problems] == [
        "no such field (known: project_name, host, admins, quota)"]
    assert make_canal().runs() == []


def test_the_run_records_its_digest(project, make_canal):
    canal = make_canal()
    canal.start("create-project", thread_id="t")
    values = canal.store.saver().get_tuple({"configurable": {"thread_id": "t"}}).checkpoint[
        "channel_values"]
    assert values["digest"] == canal.workflow("create-project").digest
    assert values["digest"].startswith("sha256:")


def test_first_steps_may_be_automated_and_notification_acks(workflows, make_canal, recorder):
    write_workflow(workflows, "auto-first", {
        "01-make.md": {"type": "automated", "automation": {
            "tool": "create_project",
            "input_mapping": {"name": "fixed", "host": "h.example.com", "admins": []}}},
        "02-confirm.md": ({"type": "interactive"}, "Confirm {{result.make.project.name}}."),
        "03-done.md": ({"type": "notification"}, "Done."),
    })
    canal = make_canal()
    env = canal.start("auto-first", thread_id="t")
    assert env.executed[0]["arguments"] == {"name": "fixed", "host": "h.example.com", "admins": []}
    assert env.step.id == "confirm" and env.step.gate == {}
    assert env.step.instructions == "Confirm fixed."
    extra = make_canal().advance("t", {"anything": 1})
    assert extra.status == "awaiting_input" and extra.dropped == ["anything"]
    assert make_canal().advance("t").status == "completed"


def test_a_result_path_that_does_not_exist_fails_the_step(workflows, make_canal, recorder):
    write_workflow(workflows, "bad-path", {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {"n": {"type": "string"}}}},
        "02-make.md": {"type": "automated", "automation": {
            "tool": "create_project",
            "input_mapping": {"name": "{{gate.ask.n}}", "admins": [], "host": "x"}}},
        "03-role.md": {"type": "automated", "automation": {
            "tool": "create_role", "input_mapping": {"project_id": "{{result.make.nope.id}}"}}},
    })
    canal = make_canal()
    canal.start("bad-path", thread_id="t")
    env = canal.advance("t", {"n": "x"})
    assert env.status == "failed" and env.step.id == "role"
    assert env.errors[0]["message"] == "{{result.make.nope.id}}: result of 'make' has no 'nope'"
    assert [c[0] for c in recorder.calls] == ["create_project"]


def test_unknown_tool_parks_the_run(workflows, make_canal):
    write_workflow(workflows, "ghost", {
        "01-call.md": {"type": "automated", "automation": {"tool": "ghost_tool"}},
    })
    env = make_canal().start("ghost", thread_id="t")
    assert env.status == "failed"
    assert env.errors[0]["message"] == "unknown tool 'ghost_tool' (known: create_project, create_role)"


def test_data_that_is_not_json_is_refused_before_anything(project, make_canal, recorder):
    import datetime

    from canal import UsageError

    canal = make_canal()
    canal.start("create-project", thread_id="t")
    before = checkpoint_count(canal, "t")
    for bad in ({"project_name": datetime.date.today(), "host": "a.example.com"},
                {"project_name": "p", "host": "a.example.com", "quota": float("inf")}):
        with pytest.raises(UsageError, match="the submitted data is not JSON data"):
            canal.advance("t", bad)
    assert checkpoint_count(canal, "t") == before and recorder.calls == []


def test_data_for_a_step_the_run_has_left_is_stale(project, make_canal, recorder):
    canal = make_canal()
    canal.start("create-project", thread_id="t")
    canal.advance("t", {"project_name": "p", "host": "a.example.com"},
                  step="collect-project-info")
    before = checkpoint_count(canal, "t")
    env = make_canal().advance("t", {"project_name": "again", "host": "b.example.com"},
                               step="collect-project-info")
    assert env.status == "stale" and env.step.id == "summary"
    assert env.errors == [{"code": "stale", "message": "the data is for step "
                           "'collect-project-info' but the run is at step 'summary'; "
                           "nothing was applied", "field": ""}]
    assert checkpoint_count(canal, "t") == before and len(recorder.calls) == 2
    assert make_canal().advance("t", {}, step="summary").status == "completed"
