"""``canal langgraph-json`` writes one LangGraph Server graph per workflow, keeps what is
not canal's, and refuses to overwrite a user's own graph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import Cli, project_steps, write_workflow

ENTRY = "canal.integrations.langgraph_server"
ROOT = Path(__file__).resolve().parents[2]


def read(project: Path) -> dict:
    return json.loads((project / "langgraph.json").read_text(encoding="utf-8"))


def test_a_new_file_serves_every_workflow_under_its_own_name(cli: Cli, project: Path):
    write_workflow(project / "workflows", "second-one", project_steps())
    out = cli("langgraph-json")
    assert out.code == 0
    assert out.json["graphs"] == out.json["added"] == ["create-project", "second-one"]
    assert read(project) == {"dependencies": ["."], "graphs": {
        "create-project": f"{ENTRY}:create-project", "second-one": f"{ENTRY}:second-one"}}


def test_rewriting_keeps_the_users_keys_and_drops_deleted_workflows(cli: Cli, project: Path):
    (project / "langgraph.json").write_text(json.dumps({
        "dependencies": ["./src"], "env": ".env",
        "graphs": {"mine": "./agent.py:graph", "gone": f"{ENTRY}:gone"}}), encoding="utf-8")
    out = cli("langgraph-json")
    assert (out.json["added"], out.json["removed"]) == (["create-project"], ["gone"])
    assert read(project) == {"dependencies": ["./src"], "env": ".env", "graphs": {
        "mine": "./agent.py:graph", "create-project": f"{ENTRY}:create-project"}}


def test_a_users_graph_with_a_workflows_name_is_a_conflict(cli: Cli, project: Path):
    text = json.dumps({"graphs": {"create-project": "./agent.py:graph"}})
    (project / "langgraph.json").write_text(text, encoding="utf-8")
    out = cli("langgraph-json")
    assert out.code == 8 and "create-project" in out.json["error"]["message"]
    assert (project / "langgraph.json").read_text(encoding="utf-8") == text


@pytest.mark.parametrize("text", ["{graphs", '{"graphs": {}, "x": NaN}', "[]"])
def test_a_file_that_is_not_a_json_object_is_a_configuration_error(cli: Cli, project: Path,
                                                                    text: str):
    (project / "langgraph.json").write_text(text, encoding="utf-8")
    out = cli("langgraph-json", "--output", "langgraph.json")
    assert out.code == 8 and "langgraph.json" in out.json["error"]["message"]
    assert (project / "langgraph.json").read_text(encoding="utf-8") == text


def test_the_shipped_file_is_what_the_command_writes(tmp_path: Path):
    (tmp_path / "workflows").symlink_to(ROOT / "workflows")
    out = Cli(tmp_path)("langgraph-json")
    assert out.code == 0
    assert read(tmp_path) == json.loads((ROOT / "langgraph.json").read_text(encoding="utf-8"))
