"""Workflows whose automated steps call real MCP servers, connected lazily."""

from __future__ import annotations

import pytest

from canal import Canal
from tests.conftest import schema, write_workflow


def steps(second_tool: str = "second") -> dict:
    return {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "name": {"type": "string", "required": True}}}},
        "02-one.md": {"type": "automated", "automation": {
            "tool": "first", "input_mapping": {"name": "{{gate.ask.name}}"}}},
        "03-two.md": {"type": "automated", "automation": {
            "tool": second_tool, "input_mapping": {"from_one": "{{result.one.arguments.name}}"}}},
        "04-three.md": {"type": "automated", "automation": {
            "tool": "third", "input_mapping": {"server_of_two": "{{result.two.server}}"}}},
        "05-done.md": ({"type": "notification"}, "{{result.three.arguments.server_of_two}}"),
    }


BETA_TOOLS = [{"name": "second"},
              {"name": "broken", "behavior": "error", "result": "quota exceeded"},
              {"name": "crashing", "behavior": "crash"},
              {"name": "hanging", "behavior": "hang"}]


@pytest.fixture
def make(tmp_path):
    """New Canal objects over one project folder (each like a new session)."""

    def make() -> Canal:
        return Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
                     mcp_config=tmp_path / ".mcp.json")

    return make


@pytest.fixture
def project(tmp_path, toolbox, make):
    toolbox.add("alpha", [{"name": "first", "inputSchema": schema("name", name="string")},
                          {"name": "third"}], timeout=1.5)
    toolbox.add("beta", BETA_TOOLS, timeout=1.5)
    with make() as canal:
        canal.discover()
    return tmp_path


def test_each_server_starts_once_per_advance_and_never_for_start_or_current(project, toolbox,
                                                                           make):
    write_workflow(project / "workflows", "chain", steps())
    after_discover = {s: toolbox.starts(s) for s in ("alpha", "beta")}
    with make() as canal:
        env = canal.start("chain", thread_id="t")
    assert env.step.id == "ask"
    with make() as canal:
        assert canal.current("t").status == "awaiting_input"
    assert {s: toolbox.starts(s) for s in ("alpha", "beta")} == after_discover

    with make() as canal:
        env = canal.advance("t", {"name": "n"})
    assert env.status == "awaiting_input" and env.step.instructions == "beta"
    assert [(e["tool"], e["ok"]) for e in env.executed] == [
        ("first", True), ("second", True), ("third", True)]
    assert toolbox.starts("alpha") == after_discover["alpha"] + 1
    assert toolbox.starts("beta") == after_discover["beta"] + 1
    assert [c["tool"] for c in toolbox.calls("alpha")] == ["first", "third"]
    assert toolbox.calls("beta") == [{"server": "beta", "tool": "second",
                                      "arguments": {"from_one": "n"}}]
    with make() as canal:
        assert canal.advance("t", {}).status == "completed"
    assert toolbox.starts("alpha") == after_discover["alpha"] + 1


@pytest.mark.parametrize("tool, message", [
    ("broken", "broken: quota exceeded"),
    ("crashing", "crashing: MCP server 'beta' failed: the server closed the connection (it "
                 "may have crashed); see {log}"),
    ("hanging", "hanging: MCP server 'beta' failed: no answer within 1.5s (the server's "
                "timeout); see {log}"),
    ("ghost", "no tool 'ghost' in the tool cache (run 'canal discover' to sync the MCP "
              "servers' tools)"),
])
def test_a_failing_tool_parks_the_run_and_retry_recovers(project, toolbox, make, tool,
                                                        message):
    message = message.format(log=project / ".canal" / "logs" / "beta.log")
    write_workflow(project / "workflows", "chain", steps(second_tool=tool))
    with make() as canal:
        canal.start("chain", thread_id="t")
        env = canal.advance("t", {"name": "n"})
    assert env.status == "failed" and env.step.id == "two"
    assert env.errors == [{"code": "tool_error", "message": message, "step": "two",
                           "tool": tool, "key": "t:two:0", "kind": "tool_error"}]
    assert [e["tool"] for e in env.executed] == ["first", tool]
    with make() as canal:
        assert canal.current("t").errors[0]["message"] == message

    # The backend is mended (and the missing tool appears): retrying now succeeds.
    toolbox.set_tools("beta", [{"name": t["name"]} for t in BETA_TOOLS] + [{"name": "ghost"}])
    with make() as canal:
        canal.discover()
        env = canal.advance("t", {"action": "retry"})
    assert env.status == "awaiting_input" and env.step.id == "done"
    assert [c["tool"] for c in toolbox.calls("alpha")] == ["first", "third"]
