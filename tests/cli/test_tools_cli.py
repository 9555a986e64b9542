"""discover, index, meta, call and run from the command line, against the example backend."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, Cli, fresh_imports

SHIPPED = ROOT / "workflows" / "create-permission-set"
SERVER = ROOT / "examples" / "permission_platform" / "server.py"
ANSWERS = ROOT / "examples" / "permission_platform" / "answers.yaml"


@pytest.fixture
def platform(tmp_path: Path) -> Cli:
    """A project folder with the shipped workflow and the example backend configured."""
    shutil.copytree(SHIPPED, tmp_path / "workflows" / SHIPPED.name)
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"permission-platform": {
        "command": sys.executable, "args": [str(SERVER)],
        "env": {"PERMISSION_PLATFORM_DB": str(tmp_path / "platform.db")}}}}))
    return Cli(tmp_path)


def test_the_shipped_workflow_end_to_end(platform):
    assert platform("validate").json["status"] == "ok"
    found = platform("discover")
    assert found.code == 0
    assert found.json["added"] == ["create_project", "create_role", "delete_project",
                                   "get_project", "list_projects"]
    assert found.json["workflow_count"] == 1
    assert found.json["affected"] == []
    # against the tools it calls (their input and output schemas), it is still clean
    checked = platform("validate").json
    assert checked["status"] == "ok"
    assert checked["workflows"][0]["warnings"] == [], checked
    index = platform("index").json
    assert index["workflows"] == [
        "create-permission-set: Create a project on the permission platform and a first "
        "role in it"]
    assert "delete_project (destructive): Delete a project and all of its roles (cannot be " \
           "undone)." in index["tools"]
    full = platform("index", "--full").json
    assert {t["name"]: t["hints"] for t in full["tools"]}["get_project"] == ["read-only"]
    required = platform("meta", "create_project", "--required-only").json
    assert [f["name"] for f in required["fields"]] == ["name", "host", "auth_mode", "admins"]
    assert required["ignored"] == ["id", "insert_time", "update_admin", "update_time"]

    thread = platform("start", "create-permission-set").json["thread_id"]
    first = platform("advance", thread, "--gate-data", json.dumps({
        "project_name": "billing", "host": "billing.example.com", "auth_mode": 1,
        "admins": "ann,bob"}))
    assert first.code == 0, first.stdout
    assert first.json["step"]["id"] == "collect-role-info"
    assert first.json["executed"][0]["result"]["admins"] == ["ann", "bob"]
    second = platform("advance", thread, "--gate-data", '{"role_name": "reader"}')
    assert second.json["step"]["id"] == "summary"
    assert "role **reader** (id 1)" in second.json["step"]["instructions"]
    assert platform("advance", thread).json["status"] == "completed"
    roles = platform("call", "get_project", "--args", '{"project_id": 1}').json
    assert roles["result"]["roles"][0]["role_name"] == "reader"


def test_a_backend_refusal_parks_the_run(platform):
    platform("discover")
    data = {"project_name": "dup", "host": "dup.example.com", "auth_mode": 0, "admins": "a"}
    platform("call", "create_project", "--args", json.dumps(
        {"name": "dup", "host": "dup.example.com", "auth_mode": 0, "admins": "a"}))
    thread = platform("start", "create-permission-set").json["thread_id"]
    failed = platform("advance", thread, "--gate-data", json.dumps(data))
    assert failed.code == 7
    assert failed.json["status"] == "failed"
    assert failed.json["errors"][0]["message"].startswith(
        "create_project: a project named 'dup' already exists (id 1)")
    aborted = platform("advance", thread, "--gate-data", '{"action": "abort"}')
    assert aborted.code == 0 and aborted.json["status"] == "aborted"


def test_run_with_answers_completes_the_example(platform):
    platform("discover")
    result = platform("run", "create-permission-set", "--answers", str(ANSWERS))
    assert result.code == 0, result.stderr
    assert result.json["status"] == "completed"
    assert [e["tool"] for e in result.json["executed"]] == ["create_project", "create_role"]
    assert "resume with: canal run create-permission-set --thread-id" in result.stderr
    assert "role **reader**" in result.stderr


def test_run_prompts_a_person_field_by_field(platform):
    platform("discover")
    typed = "\n".join(["shop", "not a domain", "9", "2", "zoe",   # host rejected by the gate
                       "shop.example.com",                         # only host is asked again
                       "", "admin", "read, write", ""]) + "\n"
    result = platform("run", "create-permission-set", stdin=typed)
    assert result.code == 0, result.stderr
    assert result.json["status"] == "completed"
    assert "not one of the choices" in result.stderr
    assert "host: Service domain: e.g. billing.example.com; must match ^(" in result.stderr
    assert "this field is required" in result.stderr
    assert result.json["executed"][1]["arguments"] == {
        "project_id": 1, "role_name": "admin", "permissions": ["read", "write"]}


def test_run_stops_where_answers_run_out_and_resumes(platform, tmp_path):
    platform("discover")
    partial = tmp_path / "partial.json"
    partial.write_text(json.dumps({"collect-project-info": {
        "project_name": "p", "host": "p.example.com", "auth_mode": 3, "admins": "x"}}))
    stopped = platform("run", "create-permission-set", "--answers", str(partial))
    assert stopped.code == 2
    assert stopped.json["status"] == "awaiting_input"
    assert stopped.json["step"]["id"] == "collect-role-info"
    assert "no answer for step 'collect-role-info'" in stopped.stderr
    thread = stopped.json["thread_id"]
    resumed = platform("run", "create-permission-set", "--thread-id", thread,
                       "--answers", str(ANSWERS))
    assert resumed.json["status"] == "completed" and resumed.json["thread_id"] == thread


@pytest.mark.parametrize("content, message", [
    ("[1, 2]", "must map step ids to objects of field values"),
    ("{unclosed: [", "cannot read"),
    # a few bytes of aliases expand into gigabytes
    ("a: &a [x, x]\nb: &b [*a, *a]\nc: [*b, *b]\n", "aliases (*name) are not allowed"),
    ("collect-project-info: {when: 2024-01-01T10:00:00, key: !!binary aGk=}",
     "collect-project-info.key is not a JSON value: bytes (!!binary)"),
    ("collect-project-info: {ratio: .nan}",
     "collect-project-info.ratio is not a JSON value: a number that is not finite"),
    ("x: " + "[" * 40 + "]" * 40, "nested more than 32 levels deep"),
])
def test_run_refuses_a_bad_answers_file(platform, tmp_path, content, message):
    answers = tmp_path / "answers.yaml"
    answers.write_text(content)
    result = platform("run", "create-permission-set", "--answers", str(answers))
    assert result.code == 2 and message in result.json["error"]["message"]
    assert platform("runs").json["count"] == 0


def test_run_without_input_stops_cleanly(platform):
    platform("discover")
    result = platform("run", "create-permission-set", stdin="")
    assert result.code == 2
    assert result.json["error"]["message"] == (
        "no more input on stdin; answer interactively or use --answers FILE")


@pytest.mark.parametrize("args, code, error_code, message", [
    (["meta", "nope"], 4, "unknown_tool", "no tool 'nope' in the tool cache"),
    (["call", "nope"], 4, "unknown_tool", "no tool 'nope' in the tool cache"),
    (["call", "create_project", "--args", "{oops"], 2, "usage", "--args is not valid JSON"),
])
def test_tool_command_errors(platform, args, code, error_code, message):
    platform("discover")
    result = platform(*args)
    assert result.code == code
    assert result.json["error"]["code"] == error_code
    assert message in result.json["error"]["message"]


def test_call_rejects_bad_arguments_with_exit_3(platform):
    platform("discover")
    result = platform("call", "create_project", "--args",
                      '{"name": "x", "auth_mode": "1", "id": 4}')
    assert result.code == 3
    assert result.json["missing"] == ["host", "admins"]
    assert result.json["errors"] == [{"field": "auth_mode",
                                      "message": "expected integer, got string"}]
    assert result.json["dropped"] == ["id"]


def test_discover_with_a_broken_server_exits_9(platform, tmp_path):
    config = json.loads((tmp_path / ".mcp.json").read_text())
    config["mcpServers"]["broken"] = {"command": str(tmp_path / "missing-binary"),
                                      "env": {"API_TOKEN": "hunter2"}}
    (tmp_path / ".mcp.json").write_text(json.dumps(config))
    result = platform("discover")
    assert result.code == 9
    assert result.json["status"] == "partial"
    assert result.json["servers"]["permission-platform"] == {"status": "ok", "tools": 5}
    assert "hunter2" not in result.stdout + result.stderr


def test_a_bad_mcp_config_is_a_config_error(platform, tmp_path):
    (tmp_path / ".mcp.json").write_text('{"mcpServers": {"x": {}}}')
    result = platform("discover")
    assert result.code == 8
    assert result.json["error"]["message"] == (
        f"{tmp_path / '.mcp.json'}: mcpServers.x: needs 'command' (a stdio server) or 'url' "
        "(an HTTP server)")


def test_read_only_tool_commands_import_no_engine_and_no_mcp(platform):
    platform("discover")
    assert fresh_imports(platform, [["index"], ["meta", "create_project"],
                                    ["search", "create a project"]],
                         ("langgraph", "langchain", "mcp")) == []


def test_a_destructive_tool_needs_confirm(platform):
    platform("discover")
    platform("call", "create_project", "--args", json.dumps(
        {"name": "doomed", "host": "doomed.example.com", "auth_mode": 0, "admins": "a"}))
    refused = platform("call", "delete_project", "--args", '{"project_id": 1}')
    assert refused.code == 2 and refused.json["error"]["code"] == "needs_confirmation"
    assert refused.json["error"]["message"] == (
        "delete_project is destructive (its server says destructiveHint); nothing was sent: "
        "call it again with --confirm to go ahead")
    assert platform("call", "get_project", "--args", '{"project_id": 1}').code == 0
    done = platform("call", "delete_project", "--args", '{"project_id": 1}', "--confirm")
    assert done.code == 0 and done.json["result"] == {"deleted": 1}
    # create_project says destructiveHint: false, list_projects says nothing about it:
    # neither needs --confirm
    assert platform("call", "list_projects").json["result"] == {"projects": []}


def test_run_shows_a_destructive_call_before_asking(platform, tmp_path):
    wf = tmp_path / "workflows" / "remove"
    (wf / "references").mkdir(parents=True)
    (wf / "WorkFlow.md").write_text("---\nname: remove\ndescription: d\n---\n")
    (wf / "references" / "01-pick.md").write_text(
        "---\ntype: interactive\ngate:\n  schema:\n    project_id: {type: integer, "
        "required: true}\n---\nWhich project?\n")
    (wf / "references" / "02-delete.md").write_text(
        "---\ntype: automated\nautomation:\n  tool: delete_project\n  input_mapping:\n"
        "    project_id: \"{{gate.pick.project_id}}\"\n---\n")
    platform("discover")
    platform("call", "create_project", "--args", json.dumps(
        {"name": "doomed", "host": "doomed.example.com", "auth_mode": 0, "admins": "a"}))
    result = platform("run", "remove", stdin="1\nn\nabort\n")
    assert '  call: delete_project {"project_id": 1}' in result.stderr
    assert result.json["status"] == "aborted"
    assert platform("call", "get_project", "--args", '{"project_id": 1}').code == 0
