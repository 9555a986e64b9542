"""Compensation on abort: completed steps undone newest first, every outcome reported."""

from __future__ import annotations

import pytest

from canal import PythonTools
from canal.spec import check_workflow
from tests.conftest import write_workflow

VALID = {"project_name": "p", "host": "p.example.com"}


def steps(role_compensation: dict | None = None) -> dict:
    role = {"type": "automated", "automation": {
        "tool": "create_role", "input_mapping": {"project_id": "{{result.create-project.id}}"}}}
    if role_compensation is not None:
        role["compensate"] = role_compensation
    return {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "project_name": {"type": "string", "required": True},
            "host": {"type": "string", "required": True}}}},
        "02-create-project.md": {
            "type": "automated",
            "automation": {"tool": "create_project",
                           "input_mapping": {"name": "{{gate.ask.project_name}}"}},
            "compensate": {"tool": "delete_project",
                           "input_mapping": {"project_id": "{{result.create-project.id}}",
                                             "why": "undo {{gate.ask.project_name}}"}}},
        "03-create-role.md": role,
        "04-confirm.md": {"type": "interactive"},
    }


class Platform:
    def __init__(self) -> None:
        self.calls: list[tuple[str, dict]] = []
        self.fail: set[str] = set()
        self.crash: set[str] = set()

    def tool(self, name):
        def call(**kwargs):
            self.calls.append((name, kwargs))
            if name in self.crash:
                self.crash.discard(name)
                raise KeyboardInterrupt  # the process dies inside the call
            if name in self.fail:
                raise RuntimeError(f"{name} is down")
            return {"create_project": {"id": 7}, "create_role": {"role_id": "r7"}}.get(
                name, {"done": name})
        return call

    def client(self) -> PythonTools:
        return PythonTools({n: self.tool(n) for n in (
            "create_project", "create_role", "delete_project", "delete_role")})


@pytest.fixture
def platform():
    return Platform()


@pytest.fixture
def flow(workflows, make_canal, platform):
    write_workflow(workflows, "flow", steps({"tool": "delete_role", "input_mapping": {
        "role_id": "{{result.create-role.role_id}}"}}))
    return lambda: make_canal(tools=platform.client())


def test_abort_undoes_completed_steps_newest_first(flow, platform):
    flow().start("flow", thread_id="t")
    flow().advance("t", VALID)
    env = flow().abort("t")
    assert env.status == "aborted" and env.errors == []
    assert platform.calls[2:] == [("delete_role", {"role_id": "r7"}),
                                  ("delete_project", {"project_id": 7, "why": "undo p"})]
    assert [(e["step"], e["tool"], e["ok"], e["compensation"]) for e in env.executed] == [
        ("create-role", "delete_role", True, True),
        ("create-project", "delete_project", True, True)]
    kinds = [e["kind"] for e in flow().history("t")["entries"]]
    assert kinds[-3:] == ["abort", "compensate", "compensate"]


def test_a_failed_compensation_is_reported_and_the_others_still_run(flow, platform):
    flow().start("flow", thread_id="t")
    flow().advance("t", VALID)
    platform.fail.add("delete_role")
    env = flow().abort("t")
    assert env.status == "aborted"
    assert env.errors == [{"code": "compensation_failed",
                           "message": "delete_role: RuntimeError: delete_role is down",
                           "step": "create-role", "tool": "delete_role", "compensation": True}]
    assert platform.calls[-1][0] == "delete_project"
    assert flow().current("t").errors == env.errors


def test_abort_answered_to_a_failed_step_undoes_what_completed(flow, platform):
    platform.fail.add("create_role")
    flow().start("flow", thread_id="t")
    assert flow().advance("t", VALID).status == "failed"
    env = flow().advance("t", {"action": "abort"})
    assert env.status == "aborted"
    assert [c[0] for c in platform.calls] == ["create_project", "create_role", "delete_project"]


def test_a_skipped_step_is_not_compensated(flow, platform):
    platform.fail.add("create_role")
    flow().start("flow", thread_id="t")
    flow().advance("t", VALID)
    flow().advance("t", {"action": "skip"})
    flow().abort("t")
    assert [c[0] for c in platform.calls] == ["create_project", "create_role", "delete_project"]


def test_nothing_to_undo_before_any_tool_ran(flow, platform):
    flow().start("flow", thread_id="t")
    env = flow().abort("t")
    assert env.status == "aborted" and env.executed == [] and platform.calls == []


def test_compensations_cut_short_are_finished_by_resume(flow, platform):
    flow().start("flow", thread_id="t")
    flow().advance("t", VALID)
    platform.crash.add("delete_project")
    with pytest.raises(KeyboardInterrupt):
        flow().abort("t")
    now = flow().current("t")
    assert now.status == "aborted"
    assert now.errors[-1]["message"] == "the compensations were cut short; canal recover finishes them"
    platform.calls.clear()
    env = flow().recover("t")
    assert env.status == "aborted"
    # delete_role finished before the crash: replayed from the journal, not sent again.
    # delete_project was in flight and is not safe to repeat: reported, not sent again.
    assert platform.calls == []
    assert [e["message"] for e in env.errors] == [
        "the call may or may not have happened (the process stopped during it); retry, "
        "skip or abort"]
    assert flow().current("t").errors == env.errors


def test_compensation_is_checked_by_the_validator(workflows):
    bad = steps({"tool": "delete_role", "input_mapping": {"x": "{{result.confirm.y}}"}})
    bad["04-confirm.md"] = {"type": "interactive", "compensate": {"tool": "t"}}
    _, problems = check_workflow(write_workflow(workflows, "bad", bad))
    assert [str(p) for p in problems] == [
        "references/04-confirm.md: compensate: only automated steps call tools",
        "references/03-create-role.md: compensate.input_mapping.x: {{result.confirm.y}}: "
        "step 'confirm' has not run yet at this point (it comes after 'create-role')",
    ]
