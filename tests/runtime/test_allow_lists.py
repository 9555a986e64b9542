"""Least privilege: a workflow may declare the tools and MCP servers its steps may use."""

from __future__ import annotations

import pytest

from canal import Canal, PythonTools
from canal.spec import check_workflow
from tests.conftest import project_steps, schema, write_workflow

ENTRY = {"name": "create-project", "description": "d"}


def test_validate_rejects_tools_outside_the_list(workflows):
    steps = project_steps()
    steps["02-create-project.md"][0]["compensate"] = {"tool": "delete_project"}
    folder = write_workflow(workflows, "create-project", steps,
                            entry={**ENTRY, "tools": ["create_project"]})
    _, problems = check_workflow(folder)
    assert [str(p) for p in problems] == [
        "references/02-create-project.md: compensate.tool: delete_project: not among the "
        "tools WorkFlow.md allows (create_project)",
        "references/03-create-role.md: automation.tool: create_role: not among the tools "
        "WorkFlow.md allows (create_project)"]


def test_a_complete_list_is_valid(workflows):
    folder = write_workflow(workflows, "create-project", project_steps(),
                            entry={**ENTRY, "tools": ["create_project", "create_role"]})
    assert check_workflow(folder)[1] == []


def test_servers_are_enforced_when_the_step_runs(workflows, tmp_path, toolbox):
    toolbox.add("trusted", [{"name": "first"}])
    toolbox.add("other", [{"name": "second", "inputSchema": schema()}])
    write_workflow(workflows, "fenced", {
        "01-one.md": {"type": "automated", "automation": {"tool": "first"}},
        "02-two.md": {"type": "automated", "automation": {"tool": "second"}},
        "03-three.md": {"type": "automated", "automation": {"tool": "local"}},
        "04-done.md": {"type": "notification"},
    }, entry={"name": "fenced", "description": "d", "servers": ["trusted"]})
    canal = Canal(workflows=workflows, home=tmp_path / ".canal",
                  mcp_config=tmp_path / ".mcp.json")
    canal.discover()
    env = canal.start("fenced", thread_id="t")
    assert env.status == "failed" and env.step.id == "two"
    assert env.errors[0]["message"] == ("second is served by 'other', which workflow 'fenced' "
                                      "may not use (servers: trusted)")
    assert toolbox.calls("other") == []
    assert [c["tool"] for c in toolbox.calls("trusted")] == ["first"]


def test_python_tools_are_not_on_a_server(workflows, tmp_path):
    write_workflow(workflows, "fenced", {
        "01-one.md": {"type": "automated", "automation": {"tool": "local"}},
        "02-done.md": {"type": "notification"},
    }, entry={"name": "fenced", "description": "d", "servers": []})
    canal = Canal(workflows=workflows, home=tmp_path / ".canal")
    canal.tools.python = PythonTools({"local": lambda: {"ok": True}})
    assert canal.start("fenced", thread_id="t").status == "awaiting_input"


@pytest.mark.parametrize("entry, message", [
    ({**ENTRY, "tools": "create_project"}, "tools: Input should be a valid tuple"),
    ({**ENTRY, "servers": [1]}, "servers.0: Input should be a valid string"),
])
def test_malformed_lists(workflows, entry, message):
    folder = write_workflow(workflows, "create-project", project_steps(), entry=entry)
    assert any(message in str(p) for p in check_workflow(folder)[1])
