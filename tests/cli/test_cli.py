"""The command line on the default SQLite store: each command runs in this process as a new
``canal`` process would; one round trip and a crash mid-call use real processes."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import fresh_imports, tool_calls, write_workflow

VALID = {"project_name": "billing", "host": "billing.example.com"}


def checkpoints(project: Path, thread_id: str) -> int:
    with sqlite3.connect(project / ".canal" / "state.db") as conn:
        return conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = ?",
                            (thread_id,)).fetchone()[0]


def snapshot(project: Path) -> dict[str, bytes]:
    """Every file under .canal/ (a rejected or failed command must not change any)."""
    home = project / ".canal"
    return {str(p.relative_to(home)): p.read_bytes() for p in sorted(home.rglob("*"))
            if p.is_file()} if home.exists() else {}


def test_full_round_trip_one_process_per_call(process_cli, project):
    cli = process_cli  # the point: every step of a run may come from a new process
    started = cli("start", "create-project")
    assert started.code == 0, started.stderr
    thread = started.json["thread_id"]
    assert started.json["status"] == "awaiting_input"
    assert started.json["step"]["id"] == "collect-project-info"
    assert (project / ".canal" / "state.db").exists()
    before = checkpoints(project, thread)

    rejected = cli("advance", thread, "--gate-data", json.dumps({"project_name": "billing"}))
    assert rejected.code == 3
    assert rejected.json["status"] == "rejected"
    assert rejected.json["missing"] == ["host"]
    assert checkpoints(project, thread) == before
    assert cli("current", thread).json["step"]["id"] == "collect-project-info"

    chained = cli("advance", thread, "--gate-data", json.dumps(VALID))
    assert chained.code == 0, chained.stderr
    assert [e["tool"] for e in chained.json["executed"]] == ["create_project", "create_role"]
    assert chained.json["step"]["id"] == "summary"
    assert [c[0] for c in tool_calls(project)] == ["create_project", "create_role"]

    now = cli("current", thread)
    assert now.code == 0
    assert now.json["status"] == "awaiting_input"
    assert now.json["step"]["instructions"] == "Project 42 has role role-42."
    assert [c["step"] for c in now.json["completed"]] == [
        "collect-project-info", "create-project", "create-role"]

    done = cli("advance", thread)
    assert done.code == 0 and done.json["status"] == "completed"
    listed = cli("runs")
    assert listed.json["runs"][0]["thread_id"] == thread
    assert listed.json["runs"][0]["status"] == "completed"
    assert len(tool_calls(project)) == 2


def test_gate_file_and_stdin(cli, project):
    thread = cli("start", "create-project", "--thread-id", "from-file").json["thread_id"]
    (project / "data.json").write_text(json.dumps({"project_name": "x"}))
    from_file = cli("advance", thread, "--gate-file", "data.json")
    assert from_file.json["missing"] == ["host"]
    from_stdin = cli("advance", thread, "--gate-file", "-", stdin=json.dumps(VALID))
    assert from_stdin.code == 0 and from_stdin.json["step"]["id"] == "summary"


def test_failed_tool_parks_and_exits_7(cli, project):
    (project / "fail_role").touch()
    thread = cli("start", "create-project").json["thread_id"]
    failed = cli("advance", thread, "--gate-data", json.dumps(VALID))
    assert failed.code == 7
    assert failed.json["status"] == "failed"
    assert failed.json["errors"][0]["message"] == "create_role: RuntimeError: role backend down"
    assert cli("current", thread).json["status"] == "failed"
    (project / "fail_role").unlink()
    retried = cli("advance", thread, "--gate-data", '{"action": "retry"}')
    assert retried.code == 0 and retried.json["step"]["id"] == "summary"


def test_a_scripted_retry_is_given_once_per_failure(cli, project):
    (project / "fail_role").touch()
    answers = project / "answers.json"
    answers.write_text(json.dumps({"collect-project-info": VALID,
                                   "create-role": {"action": "retry"}}))
    result = cli("run", "create-project", "--answers", str(answers))
    assert result.code == 7
    assert result.json["status"] == "failed" and result.json["step"]["id"] == "create-role"
    assert [name for name, _ in tool_calls(project)] == [
        "create_project", "create_role", "create_role"]
    assert "step 'create-role' failed again after its scripted action" in result.stderr


@pytest.mark.parametrize("args, code, error_code, message", [
    (["advance", "{T}", "--gate-data", "{bad json"], 2, "usage",
     "--gate-data is not valid JSON: Expecting property name enclosed in double quotes"),
    (["advance", "{T}", "--gate-data", "{}", "--gate-file", "x.json"], 2, "usage",
     "give --gate-data or --gate-file, not both"),
    (["advance", "{T}", "--gate-file", "nope.json"], 2, "usage", "--gate-file: cannot read"),
    (["advance", "ghost", "--gate-data", "{}"], 4, "unknown_thread", "no run with thread id 'ghost'"),
    (["current", "ghost"], 4, "unknown_thread", "no run with thread id 'ghost'"),
    (["abort", "ghost"], 4, "unknown_thread", "no run with thread id 'ghost'"),
    (["start", "no-such-workflow"], 4, "unknown_workflow", "no workflow 'no-such-workflow'"),
    (["start", "a/b"], 2, "invalid_name", "workflow name 'a/b' is not a plain name"),
    (["start", ".."], 2, "invalid_name", "workflow name '..' is not a plain name"),
    (["start", "../workflows/create-project"], 2, "invalid_name", "is not a plain name"),
    (["current", "../x"], 2, "invalid_name", "thread name '../x' is not a plain name"),
    (["start", "create-project", "--thread-id", "{T}"], 6, "invalid_state", "is already taken"),
    (["frobnicate"], 2, "usage", "invalid choice: 'frobnicate'"),
    (["advance"], 2, "usage", "the following arguments are required: THREAD"),
    (["--checkpointer", "mongodb://x", "runs"], 8, "config", "is not a supported URL"),
])
def test_error_paths_change_nothing(cli, project, args, code, error_code, message):
    thread = cli("start", "create-project").json["thread_id"]
    cli("advance", thread, "--gate-data", '{"project_name": "half"}')
    before = snapshot(project)
    result = cli(*[a.replace("{T}", thread) for a in args])
    assert result.code == code, result.stdout
    assert result.json["status"] == "error"
    assert result.json["error"]["code"] == error_code
    assert message in result.json["error"]["message"]
    assert result.json["next"]  # every error says what to do next
    assert result.stderr == ""  # printed once, as JSON
    assert snapshot(project) == before
    assert cli("current", thread).json["step"]["id"] == "collect-project-info"


def test_advancing_a_finished_run(cli, project):
    thread = cli("start", "create-project").json["thread_id"]
    assert cli("abort", thread).json["status"] == "aborted"
    before = snapshot(project)
    result = cli("advance", thread, "--gate-data", json.dumps(VALID))
    assert result.code == 6
    assert result.json["error"] == {"code": "invalid_state", "thread_id": thread,
                                    "status": "aborted",
                                    "message": f"run {thread!r} is aborted; it cannot change "
                                               "any more"}
    assert snapshot(project) == before
    assert tool_calls(project) == []


def test_errors_before_any_run_create_no_state(cli, project):
    for args in (["current", "ghost"], ["start", "nope"], ["runs"]):
        cli(*args)
    assert not (project / ".canal").exists()
    assert cli("runs").json == {"status": "ok", "count": 0, "runs": []}


def test_validate_reports_every_problem(cli, project):
    write_workflow(project / "workflows", "broken", {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {"a": {"type": "string"}}}},
        "02-call.md": {"type": "automated", "automation": {
            "tool": "t", "input_mapping": {"x": "{{gate.ask.b}}", "y": "{{result.later.id}}"}}},
        "03-later.md": {"type": "automated", "automation": {"tool": "t"}},
        "04-odd.md": {"type": "sideways"},
    })
    result = cli("validate")
    assert result.code == 5
    assert result.json["status"] == "invalid" and result.json["problem_count"] == 3
    reports = {r["workflow"]: r for r in result.json["workflows"]}
    assert reports["create-project"]["valid"] is True
    problems = [p["problem"] for p in reports["broken"]["problems"]]
    assert problems == [
        "references/04-odd.md: type: 'sideways': not a known type (known: interactive, "
        "automated, notification)",
        "references/02-call.md: automation.input_mapping.x: {{gate.ask.b}}: no such field "
        "(known: a)",
        "references/02-call.md: automation.input_mapping.y: {{result.later.id}}: step 'later' "
        "has not run yet at this point (it comes after 'call')",
    ]
    assert result.stderr == ""  # the problems are in the JSON only
    only_good = cli("validate", "create-project")
    assert only_good.code == 0 and only_good.json["problem_count"] == 0
    assert cli("validate", "nope").code == 4


def test_graph_prints_mermaid(cli):
    result = cli("graph", "create-project")
    assert result.code == 0
    mermaid = result.json["mermaid"]
    assert "collect-project-info -.-> create-project;" in mermaid
    # every automated step: its confirmation node, the call, the recovery node (Mermaid
    # writes '.' in a node id as \2e)
    assert "create-role -.-> create-role\\2ecall;" in mermaid
    assert "create-role\\2ecall -.-> summary;" in mermaid
    assert "create-role\\2erecover -.-> summary;" in mermaid


def test_pretty_output_is_the_same_document(cli):
    plain, pretty = cli("runs"), cli("runs", "--pretty")
    assert plain.json == pretty.json and pretty.stdout.count("\n") > 1


def test_environment_and_flags_override_canal_yaml(cli, project, tmp_path):
    other = tmp_path / "elsewhere"
    write_workflow(other, "solo", {"01-note.md": ({"type": "notification"}, "Hi.")})
    cli.env["CANAL_WORKFLOWS"] = str(other)
    cli.env["CANAL_HOME"] = str(tmp_path / "state-home")
    started = cli("start", "solo")
    assert started.code == 0 and started.json["step"]["instructions"] == "Hi."
    assert (tmp_path / "state-home" / "state.db").exists()
    flagged = cli("start", "create-project", "--workflows", str(project / "workflows"))
    assert flagged.code == 0


def test_read_only_commands_do_not_import_the_graph_engine(cli, project):
    """Nor LangGraph at all, nor ``langchain_core``: the run's head is read from the
    checkpointer's tables (``canal.checkpoints.heads``). Nor do plan, which only reads, and
    show, which reads the workflow's files."""
    thread = cli("start", "create-project").json["thread_id"]
    commands = [["current", thread], ["runs"],
                ["plan", thread, "--gate-data", json.dumps(VALID)], ["show", "create-project"]]
    assert fresh_imports(cli, commands, ("langgraph", "langchain", "mcp", "rich")) == []


CRASHING_TOOLS = '''
import os, pathlib
def create_project(**kwargs):
    marker = pathlib.Path(__file__).with_name("crash")
    if marker.exists():
        marker.unlink()
        os._exit(9)  # the process dies in the middle of the call
    return {"project": {"id": 1, "name": kwargs["name"], "admins": kwargs["admins"]}}
def create_role(**kwargs):
    return {"role_id": "r"}
'''


@pytest.mark.parametrize("action, status, step", [
    ("retry", "awaiting_input", "summary"),
    ("skip", "failed", "create-role"),
    ("abort", "aborted", None),
])
def test_a_process_that_dies_mid_call(cli, project, action, status, step):
    (project / "project_tools.py").write_text(CRASHING_TOOLS)
    (project / "crash").touch()
    thread = cli("start", "create-project").json["thread_id"]
    died = subprocess.run([sys.executable, "-m", "canal", "advance", thread, "--gate-data",
                           json.dumps(VALID)], cwd=project, env=cli.env, capture_output=True)
    assert died.returncode == 9
    now = cli("current", thread)
    assert now.json["status"] == "failed"
    assert now.json["step"]["id"] == "create-project"
    assert "may or may not have happened" in now.json["errors"][0]["message"]
    assert cli("runs").json["runs"][0]["status"] == "failed"
    assert now.json["completed"][0]["data"]["project_name"] == "billing"
    after = cli("advance", thread, "--gate-data", json.dumps({"action": action}))
    assert after.json["status"] == status
    assert (after.json["step"] or {}).get("id") == step


def test_migrate_from_the_command_line(cli, project):
    thread = cli("start", "create-project").json["thread_id"]
    summary = project / "workflows" / "create-project" / "references" / "04-summary.md"
    summary.write_text(summary.read_text().replace("Project ", "Now project "))
    assert cli("current", thread).json["definition"]["changed"] is True
    moved = cli("migrate", thread)
    assert moved.code == 0 and moved.json["definition"]["changed"] is False
    first = project / "workflows" / "create-project" / "references" / "01-collect-project-info.md"
    cli("advance", thread, "--gate-data", json.dumps(VALID))
    first.write_text(first.read_text().replace("required: true", "required: false", 1))
    before = snapshot(project)
    refused = cli("migrate", thread)
    assert refused.code == 6
    assert refused.json["error"]["code"] == "migration_refused"
    assert refused.json["error"]["reasons"] == [
        "completed step 'collect-project-info' changed its type, gate or automation"]
    assert snapshot(project) == before
    done = cli("advance", thread)
    assert done.json["status"] == "completed"


def test_history_and_prune_from_the_command_line(cli, project):
    thread = cli("start", "create-project").json["thread_id"]
    history = cli("history", thread)
    assert history.code == 0 and [e["kind"] for e in history.json["entries"]] == ["start"]
    assert cli("history", "ghost").code == 4
    missing = cli("prune")
    assert missing.code == 2 and "--older-than" in missing.json["error"]["message"]
    bad = cli("prune", "--older-than", "soon")
    assert bad.code == 2 and "is not a number with a unit" in bad.json["error"]["message"]
    kept = cli("prune", "--older-than", "0s")
    assert kept.code == 0 and kept.json["count"] == 0
    assert kept.json["kept_unfinished"] == [thread]
    assert cli("current", thread).code == 0


SENSITIVE_STEP = """---
type: interactive
gate:
  schema:
    project_name: {type: string, required: true}
    host: {type: string, required: true}
    admins: {type: array, default: [root]}
    quota: {type: integer, default: 10}
    password: {type: string, required: true, sensitive: true}
---
Ask for the project, its domain and the admin password.
"""


def test_a_secret_never_reaches_any_command_output(cli, project):
    first = project / "workflows" / "create-project" / "references" / "01-collect-project-info.md"
    first.write_text(SENSITIVE_STEP)
    secret = "Very-Secret-Password-42"
    outputs = []
    thread = cli("start", "create-project").json["thread_id"]
    for args in (["advance", thread, "--gate-data", json.dumps({"project_name": secret})],
                 ["advance", thread, "--gate-data", json.dumps({**VALID, "password": secret})],
                 ["current", thread], ["history", thread], ["runs"], ["current", thread,
                                                                      "--pretty"]):
        result = cli(*args)
        outputs.append(result.stdout + result.stderr)
    assert secret not in "".join(outputs[1:])
    assert '"password": "********"' in outputs[3]
    for path in (project / ".canal").rglob("*"):
        if path.is_file():
            assert secret.encode() not in path.read_bytes(), path
