"""Nothing destructive runs unconfirmed: a confirmation step in front of destructive calls."""

from __future__ import annotations

import pytest

from canal import Canal, PythonTools
from canal.nodes.sensitive import MASK
from tests.conftest import schema, write_workflow


def steps(confirm: bool | None = None, tool: str = "delete_project") -> dict:
    call = {"type": "automated", "automation": {"tool": tool, "input_mapping": {
        "project_id": "{{gate.pick.project_id}}", "token": "{{gate.pick.token}}"}}}
    if confirm is not None:
        call["confirm"] = confirm
    return {
        "01-pick.md": {"type": "interactive", "gate": {"schema": {
            "project_id": {"type": "integer", "required": True},
            "token": {"type": "string", "sensitive": True, "default": "tok-secret-123"}}}},
        "02-delete.md": (call, "Deletes the project."),
        "03-done.md": {"type": "notification"},
    }


@pytest.fixture
def platform(tmp_path, toolbox):
    toolbox.add("platform", [
        {"name": "delete_project", "annotations": {"destructiveHint": True},
         "inputSchema": schema("project_id", project_id="integer", token="string")},
        {"name": "plain_tool", "inputSchema": schema()},
        {"name": "safe_delete", "annotations": {"destructiveHint": False}},
    ])
    return toolbox


@pytest.fixture
def make(workflows, tmp_path, platform):
    def make() -> Canal:
        return Canal(workflows=workflows, home=tmp_path / ".canal",
                     mcp_config=tmp_path / ".mcp.json")

    with make() as canal:
        canal.discover()
    return make


def test_a_destructive_call_waits_for_confirmation(workflows, make, platform):
    write_workflow(workflows, "w", steps())
    make().start("w", thread_id="t")
    env = make().advance("t", {"project_id": 7})
    assert env.status == "awaiting_input" and env.step.id == "delete"
    assert env.step.gate == {"confirm": {"type": "boolean", "required": True,
                                         "desc": env.step.gate["confirm"]["desc"]}}
    shown = env.to_json()["step"]
    assert shown["call"] == {"tool": "delete_project",
                             "arguments": {"project_id": 7, "token": MASK}}
    assert shown["instructions"].startswith("canal is about to call delete_project")
    assert platform.calls("platform") == []
    assert make().current("t").step.gate.keys() == {"confirm"}

    rejected = make().advance("t", {"confirm": "yes"})
    assert rejected.status == "rejected" and platform.calls("platform") == []
    done = make().advance("t", {"confirm": True})
    assert done.status == "awaiting_input" and done.step.id == "done"
    assert platform.calls("platform") == [{"server": "platform", "tool": "delete_project",
                                           "arguments": {"project_id": 7,
                                                         "token": "tok-secret-123"}}]


def test_declining_parks_the_run_and_retry_asks_again(workflows, make, platform):
    write_workflow(workflows, "w", steps())
    make().start("w", thread_id="t")
    make().advance("t", {"project_id": 7})
    declined = make().advance("t", {"confirm": False})
    assert declined.status == "failed"
    assert declined.errors[0]["message"] == "the call was not confirmed"
    assert declined.step.gate.keys() == {"action", "step"}
    again = make().advance("t", {"action": "retry"})
    assert again.status == "awaiting_input" and again.step.gate.keys() == {"confirm"}
    assert platform.calls("platform") == []
    assert make().advance("t", {"confirm": True}).step.id == "done"
    assert len(platform.calls("platform")) == 1


def test_abort_while_asked_calls_nothing(workflows, make, platform):
    write_workflow(workflows, "w", steps())
    make().start("w", thread_id="t")
    make().advance("t", {"project_id": 7})
    assert make().abort("t").status == "aborted"
    assert platform.calls("platform") == []


@pytest.mark.parametrize("tool, confirm", [
    ("plain_tool", None),        # no annotations: not destructive
    ("safe_delete", None),       # destructiveHint: false
    ("delete_project", False),   # the author opted out
])
def test_no_confirmation_without_a_reason(workflows, make, platform, tool, confirm):
    write_workflow(workflows, "w", steps(confirm=confirm, tool=tool))
    make().start("w", thread_id="t")
    env = make().advance("t", {"project_id": 7})
    assert env.step.id == "done"
    assert [c["tool"] for c in platform.calls("platform")] == [tool]


def test_confirm_true_asks_even_for_a_python_tool(workflows, tmp_path):
    write_workflow(workflows, "w", steps(confirm=True, tool="local"))
    calls = []
    canal = Canal(workflows=workflows, home=tmp_path / ".canal",
                  tools=PythonTools({"local": lambda **kw: calls.append(kw) or {}}))
    canal.start("w", thread_id="t")
    assert canal.advance("t", {"project_id": 1}).step.gate.keys() == {"confirm"}
    assert calls == []
    assert canal.advance("t", {"confirm": True}).step.id == "done" and len(calls) == 1


def test_confirm_belongs_to_automated_steps(workflows):
    from canal.spec import check_workflow

    write_workflow(workflows, "w", {"01-x.md": {"type": "notification", "confirm": True}})
    assert [str(p) for p in check_workflow(workflows / "w")[1]] == [
        "references/01-x.md: confirm: only automated steps call tools"]


def test_a_run_waiting_for_confirmation_can_migrate(workflows, make, platform):
    folder = write_workflow(workflows, "w", steps())
    make().start("w", thread_id="t")
    make().advance("t", {"project_id": 7})
    done = folder / "references" / "03-done.md"
    done.write_text(done.read_text() + "\nAll gone.\n")
    env = make().migrate("t")
    assert env.status == "awaiting_input" and env.step.gate.keys() == {"confirm"}
    assert env.definition["changed"] is False
    assert make().advance("t", {"confirm": True}).step.instructions == "All gone."


def test_migrating_away_a_pending_confirmation_calls_nothing(workflows, make, platform):
    """The confirmation the run waits for stays asked: migrate calls no tool, and the call
    happens once, on the next advance that confirms it."""
    write_workflow(workflows, "w", steps())
    make().start("w", thread_id="t")
    make().advance("t", {"project_id": 7})
    write_workflow(workflows, "w", steps(confirm=False))
    env = make().migrate("t")
    assert platform.calls("platform") == [] and env.executed == []
    assert env.definition["changed"] is False
    for now in (env, make().current("t")):
        assert now.status == "awaiting_input" and now.step.id == "delete"
        assert now.step.gate.keys() == {"confirm"} and now.errors == []
        assert now.step.call["tool"] == "delete_project"
    env = make().advance("t", {"confirm": True})
    assert [e["tool"] for e in env.executed] == ["delete_project"]
    assert len(platform.calls("platform")) == 1 and env.step.id == "done"
