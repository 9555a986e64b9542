"""validate against a real MCP server (tests/servers/toolbox.py): the contract errors, drift
reported by discover when a tool changes or disappears, and the context budget."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from canal import Canal
from tests.conftest import write_workflow

TICKET_IN = {"type": "object", "required": ["title", "priority"], "properties": {
    "title": {"type": "string"}, "priority": {"type": "integer", "enum": [0, 1, 2, 3]}}}
TICKET_OUT = {"type": "object", "properties": {"id": {"type": "integer"},
                                               "title": {"type": "string"}}}


def tools(create_in: dict[str, Any] = TICKET_IN, create_out: dict[str, Any] = TICKET_OUT,
          with_get: bool = True) -> list[dict[str, Any]]:
    found = [{"name": "create_ticket", "inputSchema": create_in, "outputSchema": create_out}]
    if with_get:
        found.append({"name": "get_ticket", "annotations": {"readOnlyHint": True},
                      "inputSchema": {"type": "object", "required": ["id"],
                                      "properties": {"id": {"type": "integer"}}}})
    return found


STEPS = {
    "01-ask.md": ({"type": "interactive", "gate": {"schema": {
        "title": {"type": "string", "required": True},
        "priority": {"type": "integer", "required": True, "enum": [0, 1, 2, 3]}}}},
        "Ask for the ticket's title and priority."),
    "02-create.md": {"type": "automated", "automation": {
        "tool": "create_ticket", "input_mapping": {
            "title": "{{gate.ask.title}}", "priority": "{{gate.ask.priority}}"}},
        "verify": {"tool": "get_ticket", "input_mapping": {"id": "{{result.create.id}}"},
                   "expect": {"title": "{{gate.ask.title}}"}}},
    "03-done.md": ({"type": "notification"}, "Ticket {{result.create.id}} is open."),
}


def canal_for(root: Path) -> Canal:
    return Canal(workflows=root / "workflows", home=root / ".canal",
                 mcp_config=root / ".mcp.json", checkpointer="memory:")


def problems_of(canal: Canal, name: str = "ticket") -> list[str]:
    [report] = canal.validate([name])
    return [f"{p.path}: {p.key}: {p.message}" for p in report["problems"]]


def test_a_changed_input_schema_is_reported_by_discover_then_by_validate(tmp_path, toolbox):
    write_workflow(tmp_path / "workflows", "ticket", STEPS)
    toolbox.add("desk", tools())
    canal = canal_for(tmp_path)
    assert canal.discover()["affected"] == []
    assert problems_of(canal) == []

    # the server now also requires a queue and takes priority as text
    changed = json.loads(json.dumps(TICKET_IN))
    changed["required"].append("queue")
    changed["properties"]["queue"] = {"type": "string"}
    changed["properties"]["priority"] = {"type": "string"}
    toolbox.set_tools("desk", tools(create_in=changed))
    summary = canal.discover()
    assert summary["changed"] == ["create_ticket"]
    assert summary["affected"] == [{"workflow": "ticket", "step": "create",
                                    "tool": "create_ticket", "change": "changed"}]
    assert problems_of(canal) == [
        "references/02-create.md: automation.input_mapping.queue: create_ticket requires "
        "argument queue, which the step does not map: add queue: ... to "
        "automation.input_mapping",
        "references/02-create.md: automation.input_mapping.priority: create_ticket takes "
        "priority as string, but gate field priority is integer, which never fits: set "
        "type: string on gate field priority, or map another value"]
    # still reported on the next validate: nothing is fixed until the workflow is
    assert len(problems_of(canal)) == 2
    assert canal.discover()["affected"] == []  # no change since the last discover


def test_a_changed_output_schema_or_a_removed_tool_is_reported(tmp_path, toolbox):
    write_workflow(tmp_path / "workflows", "ticket", STEPS)
    toolbox.add("desk", tools())
    canal = canal_for(tmp_path)
    canal.discover()
    renamed = {"type": "object", "properties": {"ticket_id": {"type": "integer"}}}
    toolbox.set_tools("desk", tools(create_out=renamed, with_get=False))
    summary = canal.discover()
    assert (summary["changed"], summary["removed"]) == (["create_ticket"], ["get_ticket"])
    assert summary["affected"] == [
        {"workflow": "ticket", "step": "create", "tool": "create_ticket", "change": "changed"},
        {"workflow": "ticket", "step": "create", "tool": "get_ticket", "change": "removed"}]
    assert problems_of(canal) == [
        "references/02-create.md: verify.tool: no tool 'get_ticket' in the tool cache or "
        "canal.yaml's Python tools: did you mean create_ticket? fix the name, or run 'canal "
        "discover' if its server offers it now",
        "references/02-create.md: verify.input_mapping.id: create_ticket's output schema has "
        "no id (it has: ticket_id): follow the schema",
        "references/03-done.md: body: create_ticket's output schema has no id (it has: "
        "ticket_id): follow the schema"]


def test_the_cache_keeps_the_output_schema(tmp_path, toolbox):
    toolbox.add("desk", tools())
    canal_for(tmp_path).discover()
    meta = json.loads((tmp_path / ".canal" / "tools" / "create_ticket.meta").read_text())
    assert meta["output_schema"] == TICKET_OUT
    get = json.loads((tmp_path / ".canal" / "tools" / "get_ticket.meta").read_text())
    assert get["output_schema"] is None


def test_without_a_tool_cache_tool_names_are_not_judged(tmp_path):
    write_workflow(tmp_path / "workflows", "ticket", STEPS)
    assert problems_of(canal_for(tmp_path)) == []


def test_the_budget_figures_and_the_flag(tmp_path):
    steps = dict(STEPS)
    steps["03-done.md"] = ({"type": "notification", "references": ["policy.md"]},
                           "Ticket {{result.create.id}} is open.")
    folder = write_workflow(tmp_path / "workflows", "ticket", steps)
    (folder / "references" / "policy.md").write_text("Policy. " * 300)
    canal = canal_for(tmp_path)
    [plain] = canal.validate(["ticket"])
    assert "budget" not in plain
    [report] = canal.validate(["ticket"], budget=400)
    figures = {f["step"]: f for f in report["budget"]}
    assert list(figures) == ["ask", "done"]  # the steps that wait for the agent
    for item in figures.values():
        assert item["tokens"] == -(-item["chars"] // 4)
    # the envelope the agent reads: instructions, gate, next; the policy file in full
    assert 300 < figures["ask"]["chars"] < 1600
    assert figures["done"]["chars"] > len("Policy. " * 300)
    assert report["valid"]
    assert [(w.path, w.key) for w in report["warnings"]] == [("references/03-done.md",
                                                               "budget")]
    assert f"about {figures['done']['tokens']} tokens" in report["warnings"][0].message
    [roomy] = canal.validate(["ticket"], budget=10_000)
    assert roomy["warnings"] == [] and roomy["budget"] == report["budget"]


def test_the_budget_in_the_cli_json(tmp_path, monkeypatch, capsys):
    from canal.cli.main import run as main

    write_workflow(tmp_path / "workflows", "ticket", STEPS)
    monkeypatch.chdir(tmp_path)
    for argv in (["validate", "--budget", "50"], ["validate", "--budget", "50", "--pretty"]):
        assert main(argv) == 0
        document = json.loads(capsys.readouterr().out)
        [report] = document["workflows"]
        assert [f["step"] for f in report["budget"]] == ["ask", "done"]
        assert {w["key"] for w in report["warnings"]} == {"budget"}
    assert main(["validate", "--budget", "0"]) == 2
