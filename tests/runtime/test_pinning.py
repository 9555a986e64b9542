"""A run keeps the definition it started with; migration moves it only when that is safe."""

from __future__ import annotations

import shutil
from datetime import datetime, timedelta, timezone

import pytest
import yaml

from canal import RunStateError, WorkflowInvalid, WorkflowNotFound
from tests.conftest import project_steps, write_workflow

VALID = {"project_name": "p", "host": "p.example.com"}


@pytest.fixture
def folder(workflows):
    return write_workflow(workflows, "create-project", project_steps())


def edit(folder, filename, change):
    """Rewrite one step file's front matter (and body) with ``change(front, body)``."""
    path = folder / "references" / filename
    _, raw, body = path.read_text().split("---\n", 2)
    front = yaml.safe_load(raw)
    front, body = change(front, body)
    path.write_text("---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n" + body)


def rename_role_argument(front, body):
    front["automation"]["input_mapping"]["renamed"] = front["automation"]["input_mapping"].pop(
        "label")
    return front, body


def test_edits_and_deletions_on_disk_never_change_a_run(folder, make_canal, recorder):
    make_canal().start("create-project", thread_id="t")
    edit(folder, "03-create-role.md", rename_role_argument)
    (folder / "references" / "04-summary.md").unlink()
    now = make_canal().current("t")
    assert now.definition["changed"] is True
    assert now.definition["on_disk"] != now.definition["digest"]

    env = make_canal().advance("t", VALID)
    assert "label" in recorder.calls[1][1] and "renamed" not in recorder.calls[1][1]
    assert env.step.id == "summary", "the deleted step is still part of the run"
    shutil.rmtree(folder)
    gone = make_canal().current("t")
    assert gone.definition["on_disk"] is None and gone.definition["changed"] is True
    assert make_canal().advance("t").status == "completed"


def test_one_canal_starts_each_run_on_the_definition_on_disk_then(folder, make_canal, recorder):
    canal = make_canal()  # a long-lived process (canal serve) keeps one Canal
    for thread in ("a", "b"):
        canal.start("create-project", thread_id=thread)
    digest = canal.current("a").definition["digest"]
    assert canal.current("b").definition["digest"] == digest
    edit(folder, "03-create-role.md", rename_role_argument)
    canal.start("create-project", thread_id="c")
    assert canal.current("c").definition["digest"] != digest
    canal.advance("c", VALID)
    assert "renamed" in recorder.calls[1][1]
    canal.advance("a", VALID)
    assert "label" in recorder.calls[3][1]  # a run keeps its own definition
    edit(folder, "03-create-role.md", lambda front, body: ({**front, "type": "nope"}, body))
    with pytest.raises(WorkflowInvalid):
        canal.start("create-project", thread_id="d")


def test_a_compatible_migration_moves_the_run(folder, make_canal, recorder):
    make_canal().start("create-project", thread_id="t")
    edit(folder, "03-create-role.md", rename_role_argument)
    edit(folder, "04-summary.md", lambda f, b: (f, "New summary for {{result.create-role.role_id}}."))
    env = make_canal().migrate("t")
    assert env.status == "awaiting_input" and env.step.id == "collect-project-info"
    assert env.definition["changed"] is False
    env = make_canal().advance("t", VALID)
    assert "renamed" in recorder.calls[1][1]
    assert env.step.instructions == "New summary for role-42."
    log = make_canal().history("t")["entries"]
    assert [e["kind"] for e in log][:3] == ["start", "migrate", "submit"]


def test_migration_with_no_change_is_a_no_op(folder, make_canal):
    make_canal().start("create-project", thread_id="t")
    env = make_canal().migrate("t")
    assert env.status == "awaiting_input" and env.definition["changed"] is False


def test_changing_a_completed_step_refuses_with_reasons(folder, make_canal, recorder):
    canal = make_canal()
    canal.start("create-project", thread_id="t")
    canal.advance("t", VALID)

    def widen_gate(front, body):
        front["gate"]["schema"]["owner"] = {"type": "string"}
        return front, body

    edit(folder, "01-collect-project-info.md", widen_gate)
    (folder / "references" / "04-summary.md").rename(folder / "references" / "04-wrap-up.md")
    before = canal.store.saver().get_tuple({"configurable": {"thread_id": "t"}}).checkpoint["id"]
    from canal.errors import MigrationRefused

    with pytest.raises(MigrationRefused) as caught:
        make_canal().migrate("t")
    assert caught.value.details["reasons"] == [
        "completed step 'collect-project-info' changed its type, gate or automation",
        "the current step 'summary' is not step 4 of the new definition",
    ]
    assert isinstance(caught.value, RunStateError)
    after = canal.store.saver().get_tuple({"configurable": {"thread_id": "t"}}).checkpoint["id"]
    assert after == before
    assert make_canal().current("t").step.id == "summary"


def test_a_failed_run_migrates_onto_a_fixed_tool(folder, make_canal, recorder):
    recorder.fail.add("create_role")
    canal = make_canal()
    canal.start("create-project", thread_id="t")
    assert canal.advance("t", VALID).status == "failed"

    def use_other_tool(front, body):
        front["automation"]["tool"] = "create_project"
        front["automation"]["input_mapping"] = {"name": "again", "host": "x", "admins": []}
        return front, body

    edit(folder, "03-create-role.md", use_other_tool)
    env = make_canal().migrate("t")
    assert env.status == "failed" and env.step.id == "create-role"
    retried = make_canal().advance("t", {"action": "retry"})
    assert retried.status == "awaiting_input"
    assert recorder.calls[-1] == ("create_project", {"name": "again", "host": "x", "admins": []})


def test_migrate_needs_the_workflow_on_disk(folder, make_canal):
    make_canal().start("create-project", thread_id="t")
    shutil.rmtree(folder)
    with pytest.raises(WorkflowNotFound, match="no workflow 'create-project'"):
        make_canal().migrate("t")


def test_a_run_stopped_mid_call_must_be_resolved_before_migrating(folder, make_canal, recorder):
    def crash(**kwargs):
        raise KeyboardInterrupt  # stands in for a process that dies inside the call

    canal = make_canal(tools=__import__("canal").PythonTools({"create_project": crash}))
    canal.start("create-project", thread_id="t")
    with pytest.raises(KeyboardInterrupt):
        canal.advance("t", VALID)
    edit(folder, "04-summary.md", lambda f, b: (f, "changed"))
    with pytest.raises(RunStateError, match="stopped in the middle of step 'create-project'"):
        make_canal().migrate("t")


LATER = datetime.now(timezone.utc) + timedelta(days=2)


def test_runs_and_prune_survive_a_renamed_step_file(folder, make_canal, recorder):
    canal = make_canal()
    canal.start("create-project", thread_id="asking")
    canal.start("create-project", thread_id="summing-up")
    canal.advance("summing-up", VALID)
    canal.start("create-project", thread_id="done")
    canal.advance("done", VALID)
    canal.advance("done")
    # an ordinary rename: the step id comes from the file name
    (folder / "references" / "04-summary.md").rename(folder / "references" / "04-wrap-up.md")

    listed = {r["thread_id"]: (r["status"], r["step"]) for r in make_canal().runs()}
    assert listed == {"asking": ("awaiting_input", "collect-project-info"),
                      "summing-up": ("awaiting_input", "summary"),
                      "done": ("completed", None)}
    report = make_canal().prune(timedelta(days=1), now=LATER)
    assert [r["thread_id"] for r in report["removed"]] == ["done"]
    assert sorted(report["kept_unfinished"]) == ["asking", "summing-up"]
    assert make_canal().advance("summing-up").status == "completed"


def test_runs_reports_the_status_of_the_pinned_step_type(folder, make_canal, recorder):
    canal = make_canal()
    canal.start("create-project", thread_id="t")
    canal.advance("t", VALID)
    edit(folder, "04-summary.md", lambda f, b: ({
        "type": "automated", "automation": {"tool": "create_role", "input_mapping": {}}}, b))
    make_canal().workflow("create-project")  # the edited definition is valid
    assert [(r["status"], r["step"]) for r in make_canal().runs()] == [
        ("awaiting_input", "summary")]
    assert make_canal().current("t").status == "awaiting_input"


def test_a_run_whose_definition_was_not_saved_never_runs_another_one(folder, make_canal):
    """A run saved before definitions were pinned uses the files on disk only while they are
    the ones it started with."""
    canal = make_canal()
    canal.start("create-project", thread_id="t")
    canal.store.drop_definitions(set())  # as an older canal left it
    assert make_canal().current("t").step.id == "collect-project-info"  # disk == pinned
    canal.store.drop_definitions(set())
    edit(folder, "01-collect-project-info.md", lambda f, b: (f, "Reworded."))
    for read in (lambda c: c.current("t"), lambda c: c.advance("t", VALID)):
        with pytest.raises(WorkflowNotFound, match="no longer saved.*differs"):
            read(make_canal())
    assert [(r["status"], r["step"]) for r in make_canal().runs()] == [
        ("unknown", "collect-project-info")]
    shutil.rmtree(folder)
    with pytest.raises(WorkflowNotFound, match="no longer saved.*gone"):
        make_canal().current("t")
