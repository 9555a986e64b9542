"""The shipped create-workflow authors a workflow through canal's built-in tools; what it
writes validates and runs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.conftest import ROOT, Cli


def test_create_workflow_writes_a_workflow_that_validates_and_runs(tmp_path: Path):
    shutil.copytree(ROOT / "workflows" / "create-workflow", tmp_path / "workflows" /
                    "create-workflow")
    cli = Cli(tmp_path)
    assert cli("validate", "create-workflow").json["status"] == "ok"
    cli("start", "create-workflow", "--thread-id", "c")
    cli("advance", "c", "--gate-data", json.dumps({"name": "greet", "description": "Greet"}))
    report = cli("advance", "c", "--gate-data", json.dumps({
        "id": "ask-name", "type": "interactive", "title": "Name",
        "fields": ["user_name:string:required"]})).json
    assert report["step"]["id"] == "report"
    assert [e["tool"] for e in report["executed"]] == ["canal_add_step", "canal_validate"]
    assert report["executed"][1]["result"]["valid"] is True
    assert "Validation: ok" in report["step"]["instructions"]
    assert cli("advance", "c").json["status"] == "completed"

    assert cli("validate", "greet").json["status"] == "ok"
    asked = cli("start", "greet", "--thread-id", "g").json
    assert asked["step"]["id"] == "ask-name" and asked["step"]["title"] == "Name"
    assert asked["step"]["gate"]["user_name"]["required"] is True
    assert cli("advance", "g", "--gate-data", '{"user_name": "Ada"}').json["status"] == \
        "completed"


def test_a_taken_name_parks_the_run_and_changes_nothing(tmp_path: Path):
    shutil.copytree(ROOT / "workflows" / "create-workflow", tmp_path / "workflows" /
                    "create-workflow")
    cli = Cli(tmp_path)
    failed = cli("advance", cli("start", "create-workflow").json["thread_id"], "--gate-data",
                 json.dumps({"name": "create-workflow", "description": "again"}))
    assert failed.json["status"] == "failed" and "exists already" in json.dumps(failed.json)
    assert sorted(p.name for p in (tmp_path / "workflows").iterdir()) == ["create-workflow"]
