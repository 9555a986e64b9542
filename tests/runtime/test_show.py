"""``Canal.show`` and ``canal show``: a workflow at a glance before it starts, read from its
files alone (no tool cache, no server, no graph, no run)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from canal import Canal, WorkflowInvalid, WorkflowNotFound
from tests.conftest import ROOT, Cli, ProcessCli, write_workflow

SECRET_DEFAULT = "hunter2-default-token"

ORDER_STEPS: dict[str, Any] = {
    "01-ask.md": ({
        "type": "interactive", "title": "The order",
        "gate": {"schema": {
            "sku": {"type": "string", "required": True, "desc": "the article",
                    "pattern": "^[A-Z]-[0-9]+$"},
            "quantity": {"type": "integer", "min": 1, "max": 100, "default": 10},
            "ratio": {"type": "number", "min": 0.5},
            "region": {"type": "string", "enum": ["eu", "uk"], "default": "eu"},
            "tags": {"type": "array", "max": 3},
            "rush": {"type": "boolean"},
            "api_token": {"type": "string", "sensitive": True, "default": SECRET_DEFAULT,
                          "enum": [SECRET_DEFAULT, "other-secret-value"]},
            "pin": {"type": "string", "required": True, "sensitive": True, "min": 4},
        }},
    }, "Ask for the order."),
    "02-reserve.md": ({
        "type": "automated", "title": "Reserve the stock",
        "when": {"gate.ask.quantity": {"gte": 10},
                 "any": [{"gate.ask.rush": True}, {"gate.ask.region": {"in": ["eu"]}}]},
        "automation": {"tool": "reserve_stock", "input_mapping": {
            "sku": "{{gate.ask.sku}}",
            "quantity": " {{ gate.ask.quantity }} ",
            "assignee": "tech-oncall",
            "time": "09:30",
            "priority": 2,
            "dry_run": False,
            "nothing": None,
            "labels": {"team": "stock", "tier": [1, 2]},
            "options": {"region": "{{gate.ask.region}}", "hold": {"days": 3},
                        "note": "for {{gate.ask.sku}} x{{gate.ask.quantity}}"},
            "tags": ["fixed", "{{gate.ask.tags}}"],
            "token": "{{gate.ask.api_token}}",
        }},
        "verify": {"tool": "get_reservation",
                   "input_mapping": {"id": "{{result.reserve.id}}"},
                   "expect": {"quantity": "{{gate.ask.quantity}}", "status": "held",
                              "items[0].sku": {"in": ["A-1", "A-2"]}}},
        "compensate": {"tool": "cancel_reservation",
                       "input_mapping": {"id": "{{result.reserve.id}}"}},
        "confirm": True,
    }, "canal reserves the stock."),
    "03-charge.md": {
        "type": "automated", "confirm": False,
        "automation": {"tool": "charge", "input_mapping": {
            "reservation": "{{result.reserve.id}}", "pin": "{{gate.ask.pin}}"}},
    },
    "04-ack.md": {"type": "interactive", "when": {"result.reserve.id": {"exists": True}}},
    "05-ping.md": {"type": "automated", "automation": {"tool": "ping"}},
    "06-done.md": ({"type": "notification", "title": "Done"},
                   "Reserved {{result.reserve.id}}."),
    "07-bye.md": ({"type": "notification"}, "Bye."),
}
ORDER_ENTRY = {"name": "order", "description": "Reserve and charge an order", "version": "2.1",
               "tools": ["reserve_stock", "get_reservation", "cancel_reservation", "charge",
                         "ping"],
               "servers": ["stock"]}

ORDER_OVERVIEW = {
    "status": "ok", "workflow": "order", "description": "Reserve and charge an order",
    "version": "2.1",
    "tools": ["reserve_stock", "get_reservation", "cancel_reservation", "charge", "ping"],
    "servers": ["stock"],
    "steps": [
        {"id": "ask", "type": "interactive", "title": "The order", "asks": {
            "sku": "string, required, pattern ^[A-Z]-[0-9]+$",
            "quantity": "integer 1..100, default 10",
            "ratio": "number >= 0.5",
            "region": 'string, one of ["eu","uk"], default "eu"',
            "tags": "array, items <= 3",
            "rush": "boolean",
            "api_token": "string, sensitive, default hidden",
            "pin": "string, required, length >= 4, sensitive",
        }},
        {"id": "reserve", "type": "automated", "title": "Reserve the stock",
         "when": {"gate.ask.quantity": {"gte": 10},
                  "any": [{"gate.ask.rush": True}, {"gate.ask.region": {"in": ["eu"]}}]},
         "tool": "reserve_stock",
         "constants": {"assignee": "tech-oncall", "time": "09:30", "priority": 2,
                       "dry_run": False, "nothing": None,
                       "labels": {"team": "stock", "tier": [1, 2]},
                       "options.hold": {"days": 3}, "tags[0]": "fixed"},
         "from": {"sku": "gate.ask.sku", "quantity": "gate.ask.quantity",
                  "options.region": "gate.ask.region",
                  "options.note": "for {{gate.ask.sku}} x{{gate.ask.quantity}}",
                  "tags[1]": "gate.ask.tags", "token": "gate.ask.api_token"},
         "verify": {"tool": "get_reservation", "expect": ["quantity", "status", "items[0].sku"]},
         "confirm": True, "compensate": "cancel_reservation"},
        {"id": "charge", "type": "automated", "tool": "charge", "constants": {},
         "from": {"reservation": "result.reserve.id", "pin": "gate.ask.pin"},
         "confirm": False},
        {"id": "ack", "type": "interactive", "when": {"result.reserve.id": {"exists": True}},
         "asks": {}},
        {"id": "ping", "type": "automated", "tool": "ping", "constants": {}, "from": {}},
        {"id": "done", "type": "notification", "title": "Done"},
        {"id": "bye", "type": "notification"},
    ],
}

SHIPPED_OVERVIEW = {
    "status": "ok", "workflow": "create-permission-set",
    "description": "Create a project on the permission platform and a first role in it",
    "version": 1,
    "steps": [
        {"id": "collect-project-info", "type": "interactive", "title": "Project details",
         "asks": {
             "project_name": "string, required, length 1..64",
             "host": r"string, required, pattern ^([a-z0-9]([a-z0-9-]*[a-z0-9])?\.)+[a-z]{2,}$",
             "auth_mode": "integer, required, one of [0,1,2,3]",
             "admins": "string, required"}},
        {"id": "create-project", "type": "automated", "tool": "create_project",
         "constants": {},
         "from": {"name": "gate.collect-project-info.project_name",
                  "host": "gate.collect-project-info.host",
                  "auth_mode": "gate.collect-project-info.auth_mode",
                  "admins": "gate.collect-project-info.admins"},
         "verify": {"tool": "get_project", "expect": ["name", "host", "auth_mode"]}},
        {"id": "collect-role-info", "type": "interactive", "title": "First role",
         "asks": {"role_name": "string, required, length >= 1",
                  "permissions": "array, default []"}},
        {"id": "create-role", "type": "automated", "tool": "create_role", "constants": {},
         "from": {"project_id": "result.create-project.id",
                  "role_name": "gate.collect-role-info.role_name",
                  "permissions": "gate.collect-role-info.permissions"},
         "verify": {"tool": "get_project", "expect": ["roles[0].role_name"]}},
        {"id": "summary", "type": "notification", "title": "Summary"},
    ],
}


@pytest.fixture
def order(tmp_path: Path) -> Path:
    """A project folder with the order workflow (and no tool cache, no servers)."""
    write_workflow(tmp_path / "workflows", "order", ORDER_STEPS, entry=ORDER_ENTRY)
    return tmp_path


def test_the_shipped_workflow_at_a_glance(tmp_path: Path) -> None:
    with Canal(workflows=ROOT / "workflows", home=tmp_path / ".canal",
               checkpointer="memory:") as canal:
        assert canal.show("create-permission-set") == SHIPPED_OVERVIEW
    assert not (tmp_path / ".canal").exists()  # read the files, nothing else


def test_constants_references_conditions_and_phases(order: Path) -> None:
    with Canal(workflows=order / "workflows", home=order / ".canal") as canal:
        shown = canal.show("order")
    assert shown == ORDER_OVERVIEW
    assert list(shown["steps"][0]["asks"]) == list(ORDER_STEPS["01-ask.md"][0]["gate"]["schema"])
    assert not (order / ".canal").exists()


def test_a_sensitive_fields_default_and_values_never_show(order: Path) -> None:
    shown = Cli(order)("show", "order")
    assert shown.code == 0
    assert shown.json == ORDER_OVERVIEW
    assert SECRET_DEFAULT not in shown.stdout + shown.stderr
    assert "other-secret-value" not in shown.stdout


def test_the_cli_prints_what_the_facade_returns(order: Path) -> None:
    pretty = Cli(order)("show", "order", "--pretty")
    assert pretty.code == 0 and pretty.json == ORDER_OVERVIEW
    assert pretty.stdout.count("\n") > 10
    assert pretty.stderr == ""


def test_an_unknown_workflow_exits_4(order: Path) -> None:
    result = Cli(order)("show", "nope")
    assert result.code == 4
    assert result.json["error"]["code"] == "unknown_workflow"
    assert "no workflow 'nope'" in result.json["error"]["message"]
    with Canal(workflows=order / "workflows", home=order / ".canal") as canal, \
            pytest.raises(WorkflowNotFound):
        canal.show("nope")


def test_an_invalid_workflow_exits_5_with_every_problem(order: Path) -> None:
    write_workflow(order / "workflows", "broken", {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {"a": {"type": "string"}}}},
        "02-call.md": {"type": "automated", "automation": {
            "tool": "t", "input_mapping": {"x": "{{gate.ask.b}}", "y": "fixed"}}},
        "03-odd.md": {"type": "sideways"},
    })
    result = Cli(order)("show", "broken")
    assert result.code == 5
    assert result.json["error"]["code"] == "invalid_workflow"
    assert [p["problem"] for p in result.json["error"]["problems"]] == [
        "references/03-odd.md: type: 'sideways': not a known type (known: interactive, "
        "automated, notification)",
        "references/02-call.md: automation.input_mapping.x: {{gate.ask.b}}: no such field "
        "(known: a)",
    ]
    assert result.stderr == ""  # the problems are in the JSON only
    with Canal(workflows=order / "workflows", home=order / ".canal") as canal, \
            pytest.raises(WorkflowInvalid):
        canal.show("broken")


def test_show_imports_no_graph_engine_no_mcp_client_no_langchain(order: Path) -> None:
    """A new process: what ``canal show`` imports is the spec and pydantic, nothing heavy."""
    probe = (
        "import sys, io, contextlib, json\n"
        "from canal.cli.main import run\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    assert run(['show', 'order']) == 0\n"
        "assert json.loads(out.getvalue())['workflow'] == 'order'\n"
        "print(sorted(m for m in sys.modules if m.startswith(('langgraph', 'langchain', "
        "'mcp', 'rich'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=order, env=ProcessCli(order).env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_the_agent_tool_answers_what_the_cli_prints(order: Path) -> None:
    with Canal(workflows=order / "workflows", home=order / ".canal") as canal:
        [tool] = canal.as_tools(include=["show"])
        assert list(tool.args) == ["workflow"]
        for workflow in ("order", "nope"):
            message = tool.invoke({"name": "show", "args": {"workflow": workflow}, "id": "1",
                                   "type": "tool_call"})
            assert message.artifact == json.loads(message.content)
            assert message.artifact == Cli(order)("show", workflow).json
