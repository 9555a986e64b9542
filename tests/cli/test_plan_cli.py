"""``canal plan THREAD [--gate-data JSON | --gate-file F]`` on the default SQLite store."""

from __future__ import annotations

import json

from canal.cli.main import build_parser
from tests.cli.test_cli import VALID, snapshot
from tests.conftest import tool_calls


def test_plan_prints_the_calls_and_changes_nothing(cli, project):
    thread = cli("start", "create-project").json["thread_id"]
    before = snapshot(project)
    planned = cli("plan", thread, "--gate-data", json.dumps(VALID))
    assert planned.code == 0, planned.stderr
    assert planned.json["status"] == "ok" and planned.json["step"] == "collect-project-info"
    assert [(i["tool"], i["when"], i["confirm"]) for i in planned.json["plan"]] == [
        ("create_project", True, False), ("create_role", True, False)]
    assert planned.json["plan"][1]["arguments"]["project_id"] == (
        "{{result.create-project.project.id}}")
    assert planned.json["stops_at"] == "summary"
    (project / "data.json").write_text(json.dumps(VALID))
    from_file = cli("plan", thread, "--gate-file", "data.json")
    assert from_file.code == 0 and from_file.json == planned.json
    assert snapshot(project) == before and tool_calls(project) == []

    done = cli("advance", thread, "--gate-data", json.dumps(VALID))
    assert [[e["tool"], e["arguments"]] for e in done.json["executed"]] == [
        [i["tool"], i["arguments"]] for i in planned.json["plan"][:1]] + [
        ["create_role", {"project_id": 42, "first_admin": "root",
                         "label": "role of billing (10)"}]]


def test_a_rejected_plan_exits_3_with_what_advance_says(cli, project):
    thread = cli("start", "create-project").json["thread_id"]
    before = snapshot(project)
    bad = json.dumps({"project_name": "billing", "host": "x", "colour": "red"})
    rejected = cli("plan", thread, "--gate-data", bad)
    assert rejected.code == 3
    assert rejected.json["status"] == "rejected" and rejected.json["dropped"] == ["colour"]
    assert rejected.json == cli("advance", thread, "--gate-data", bad).json
    assert snapshot(project) == before


def test_plan_refuses_what_advance_refuses(cli):
    assert cli("plan", "nope", "--gate-data", "{}").code == 4
    thread = cli("start", "create-project").json["thread_id"]
    assert cli("abort", thread).code == 0
    finished = cli("plan", thread, "--gate-data", json.dumps(VALID))
    assert finished.code == 6 and finished.json["error"]["code"] == "invalid_state"
    both = cli("plan", thread, "--gate-data", "{}", "--gate-file", "x.json")
    assert both.code == 2


def test_plan_is_in_the_help():
    assert "dry run" in build_parser().format_help()
