"""The workflow creator: scaffold with ``new`` and ``add-step``, then run what it wrote on a
real MCP test server; every refusal leaves the workflows folder as it was."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli, Toolbox

TICKET = {"name": "open_ticket", "description": "Open a support ticket.\nMore words.",
          "inputSchema": {"type": "object", "required": ["title", "auth_mode"], "properties": {
              "title": {"type": "string", "description": "What went wrong"},
              "priority": {"type": "integer", "description": "How urgent", "default": 2},
              "auth_mode": {"type": "integer", "description":
                            "Authentication mode: 0-pre-auth,1-SDK,2-openapi"},
              "channel": {"type": "string", "enum": ["mail", "phone"],
                          "description": "Where it came from"},
              "trace_id": {"type": "string", "description": "Tracing header"},
              "update_time": {"anyOf": [{"type": "string"}, {"type": "null"}],
                              "default": None, "description": "Last update time"},
          }}}


@pytest.fixture
def cli(tmp_path: Path, toolbox: Toolbox) -> Cli:
    """A project with one discovered test server serving ``open_ticket``."""
    (tmp_path / "workflows").mkdir()
    toolbox.add("desk", [TICKET])
    cli = Cli(tmp_path)
    assert cli("discover").code == 0
    return cli


def snapshot(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") if p.is_file() else ""
            for p in sorted(root.rglob("*"))}


def run_to_end(cli: Cli, workflow: str, answers: list[dict]) -> dict:
    """Start ``workflow`` and submit ``answers`` in turn; the last envelope."""
    envelope = cli("start", workflow, "--thread-id", "t").json
    for data in answers:
        assert envelope["status"] == "awaiting_input", envelope
        envelope = cli("advance", "t", "--gate-data", json.dumps(data)).json
    return envelope


def test_new_and_add_step_write_a_workflow_that_runs_with_typed_arguments(cli, toolbox):
    made = cli("new", "tickets", "--description", "Open a ticket")
    assert made.code == 0 and made.json["files"] == ["tickets/WorkFlow.md"]
    assert made.json["next"]["command"] == "add-step"
    steps = [
        ["--id", "ask", "--type", "interactive", "--title", "The problem",
         "--field", "title:string:required", "--field", "urgent:boolean"],
        ["--id", "file", "--type", "automated", "--tool", "open_ticket",
         "--map", "title={{gate.ask.title}}", "--map", "priority=1",
         "--map", 'auth_mode="{{gate.ask.urgent}}"', "--map", "channel=mail"],
        ["--id", "done", "--type", "notification"],
    ]
    for number, options in enumerate(steps, start=1):
        added = cli("add-step", "tickets", *options)
        assert added.code == 0, added.json
        assert added.json["files"] == [f"tickets/references/{number}0-{options[1]}.md"]
        assert added.json["next"]["command"] == "validate"
    # auth_mode needs an integer: the mapping above hands it a boolean, so fix it by hand
    path = cli.cwd / "workflows/tickets/references/20-file.md"
    path.write_text(path.read_text().replace("'{{gate.ask.urgent}}'", "0"))
    assert cli("validate", "tickets").json["status"] == "ok"

    done = run_to_end(cli, "tickets", [{"title": "printer on fire", "urgent": True}, {}])
    assert done["status"] == "completed"
    assert toolbox.calls("desk") == [{"server": "desk", "tool": "open_ticket", "arguments": {
        "title": "printer on fire", "priority": 1, "auth_mode": 0, "channel": "mail"}}]


def test_a_quoted_reference_stays_a_reference_and_keeps_its_type(cli, toolbox):
    cli("new", "typed", "--description", "d")
    cli("add-step", "typed", "--id", "ask", "--type", "interactive",
        "--field", "title:string:required", "--field", "mode:integer:required")
    cli("add-step", "typed", "--id", "file", "--type", "automated", "--tool", "open_ticket",
        "--map", 'title="{{gate.ask.title}}"', "--map", "auth_mode={{gate.ask.mode}}")
    done = run_to_end(cli, "typed", [{"title": "t", "mode": 2}])
    assert done["status"] == "completed", done
    assert toolbox.calls("desk")[0]["arguments"] == {"title": "t", "auth_mode": 2}


def test_from_tool_writes_a_workflow_from_the_tools_fields_after_its_rules(cli, toolbox):
    rules = cli.cwd / ".canal/tools/open_ticket.rules"  # a hand-written rule beside #auto
    rules.write_text(rules.read_text() + "IGNORE:trace_id\n")
    meta = cli("meta", "open_ticket").json
    assert meta["ignored"] == ["trace_id", "update_time"]
    made = cli("new", "ticket", "--from-tool", "open_ticket")
    assert made.code == 0, made.json
    assert made.json["files"] == ["ticket/WorkFlow.md",
                                  "ticket/references/10-collect-arguments.md",
                                  "ticket/references/20-call-tool.md",
                                  "ticket/references/30-show-result.md"]
    assert cli("validate", "ticket").json == {"status": "ok", "problem_count": 0, "workflows": [
        {"workflow": "ticket", "valid": True, "problems": [], "warnings": []}]}
    shown = cli("show", "ticket").json
    assert shown["description"] == "Call open_ticket: Open a support ticket."
    gate = cli("start", "ticket", "--thread-id", "t").json["step"]["gate"]
    assert set(gate) == {"title", "priority", "auth_mode", "channel"}  # no system field
    assert gate["title"]["required"] and gate["auth_mode"]["required"]
    assert not gate["priority"]["required"] and gate["priority"]["default"] == 2
    assert gate["auth_mode"]["enum"] == [0, 1, 2]
    assert "0: pre-auth" in gate["auth_mode"]["desc"]
    assert gate["channel"]["enum"] == ["mail", "phone"]

    rejected = cli("advance", "t", "--gate-data", json.dumps({"title": "x", "auth_mode": 7}))
    assert rejected.json["status"] == "rejected" and toolbox.calls("desk") == []
    shown = cli("advance", "t", "--gate-data", json.dumps({"title": "x", "auth_mode": 1}))
    assert shown.json["step"]["id"] == "show-result"
    assert '"auth_mode":1' in shown.json["step"]["instructions"]
    assert toolbox.calls("desk")[0]["arguments"] == {"title": "x", "priority": 2,
                                                     "auth_mode": 1}
    assert cli("advance", "t").json["status"] == "completed"


def test_after_inserts_a_step_and_renumbers_the_later_files(cli, toolbox):
    cli("new", "order", "--description", "d")
    cli("add-step", "order", "--id", "ask", "--type", "interactive",
        "--field", "title:string:required")
    cli("add-step", "order", "--id", "file", "--type", "automated", "--tool", "open_ticket",
        "--map", "title={{gate.ask.title}}", "--map", "auth_mode=0")
    cli("add-step", "order", "--id", "done", "--type", "notification")
    inserted = cli("add-step", "order", "--id", "confirm", "--type", "interactive",
                   "--field", "sure:boolean:required", "--after", "ask")
    assert inserted.code == 0
    assert inserted.json["files"] == ["order/references/20-confirm.md"]
    assert inserted.json["renamed"] == [
        {"from": "order/references/20-file.md", "to": "order/references/30-file.md"},
        {"from": "order/references/30-done.md", "to": "order/references/40-done.md"}]
    names = sorted(p.name for p in (cli.cwd / "workflows/order/references").iterdir())
    assert names == ["10-ask.md", "20-confirm.md", "30-file.md", "40-done.md"]
    assert [s["id"] for s in cli("show", "order").json["steps"]] == [
        "ask", "confirm", "file", "done"]

    at_confirm = cli("start", "order", "--thread-id", "t").json
    at_confirm = cli("advance", "t", "--gate-data", '{"title": "x"}').json
    assert at_confirm["step"]["id"] == "confirm" and toolbox.calls("desk") == []
    at_done = cli("advance", "t", "--gate-data", '{"sure": true}').json
    assert at_done["step"]["id"] == "done" and len(toolbox.calls("desk")) == 1


def test_a_renamed_file_keeps_the_id_its_front_matter_gives(cli):
    cli("new", "ids", "--description", "d")
    folder = cli.cwd / "workflows/ids/references"
    (folder / "01-first.md").write_text("---\ntype: notification\n---\nOne.\n")
    (folder / "02-x.md").write_text("---\ntype: notification\nid: second\n---\nTwo.\n")
    out = cli("add-step", "ids", "--id", "middle", "--type", "notification",
              "--after", "first")
    assert out.json["files"] == ["ids/references/10-middle.md"]
    assert sorted(p.name for p in folder.iterdir()) == ["01-first.md", "10-middle.md",
                                                        "20-x.md"]
    assert [s["id"] for s in cli("show", "ids").json["steps"]] == ["first", "middle", "second"]
    # the id that front matter gives counts for duplicates and --after
    assert cli("add-step", "ids", "--id", "second", "--type", "notification").code == 2
    assert cli("add-step", "ids", "--id", "last", "--type", "notification",
               "--after", "second").json["files"] == ["ids/references/30-last.md"]


REFUSED = [
    (["new", "tickets", "--description", "again"], "usage", "exists already"),
    (["new", "../out", "--description", "d"], "invalid_name", "not a plain name"),
    (["new", "fresh"], "usage", "--description"),
    (["new", "fresh", "--from-tool", "no_such_tool"], "unknown_tool", "no_such_tool"),
    (["new", "tickets", "--from-tool", "open_ticket"], "usage", "exists already"),
    (["add-step", "nope", "--id", "a", "--type", "notification"], "unknown_workflow", "nope"),
    (["add-step", "tickets", "--id", "ask", "--type", "notification"], "usage", "already"),
    (["add-step", "tickets", "--id", "bad/id", "--type", "notification"], "invalid_name",
     "step id"),
    (["add-step", "tickets", "--id", "b", "--type", "manual"], "usage", "unknown step type"),
    (["add-step", "tickets", "--id", "b", "--type", "notification", "--field", "a:string"],
     "usage", "--field is for interactive"),
    (["add-step", "tickets", "--id", "b", "--type", "interactive", "--tool", "open_ticket"],
     "usage", "--tool is for automated"),
    (["add-step", "tickets", "--id", "b", "--type", "interactive", "--map", "a=1"],
     "usage", "--map is for automated"),
    (["add-step", "tickets", "--id", "b", "--type", "automated"], "usage", "needs --tool"),
    (["add-step", "tickets", "--id", "b", "--type", "interactive", "--field", "a:text"],
     "usage", "unknown type"),
    (["add-step", "tickets", "--id", "b", "--type", "interactive", "--field", "a"],
     "usage", "NAME:TYPE"),
    (["add-step", "tickets", "--id", "b", "--type", "automated", "--tool", "t",
      "--map", "novalue"], "usage", "ARG=VALUE"),
    (["add-step", "tickets", "--id", "b", "--type", "notification", "--after", "zzz"],
     "usage", "--after 'zzz'"),
]


@pytest.mark.parametrize("argv, code, words", REFUSED)
def test_every_refusal_changes_nothing(cli, argv, code, words):
    cli("new", "tickets", "--description", "d")
    cli("add-step", "tickets", "--id", "ask", "--type", "interactive", "--field", "t:string")
    cli("add-step", "tickets", "--id", "done", "--type", "notification")
    before = snapshot(cli.cwd / "workflows")

    out = cli(*argv)

    assert out.json["status"] == "error" and out.json["error"]["code"] == code
    assert words in out.json["error"]["message"]
    assert out.code == (4 if code.startswith("unknown") else 2)
    assert out.json["next"]["command"]
    assert snapshot(cli.cwd / "workflows") == before
