"""Fault injection: SIGKILL at every boundary of a chain of automated steps.

Each case kills a ``canal advance`` process at one point (a failpoint, or the tool itself
dying), then recovers from another process (the commands after the kill run in the test's
own) and checks: nothing submitted is lost, a completed call is never sent again, and a tool
not marked safe is never called twice without an explicit retry.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

import pytest

from canal.nodes.failure import STOPPED
from tests.conftest import DYING_TOOLS, tool_calls

VALID = {"project_name": "billing", "host": "billing.example.com"}


def killed_advance(cli, project, thread, failpoint=None):
    env = dict(cli.env)
    if failpoint:
        env["CANAL_FAILPOINTS"] = failpoint
    proc = subprocess.run([sys.executable, "-m", "canal", "advance", thread, "--gate-data",
                           json.dumps(VALID)], cwd=project, env=env, capture_output=True,
                          timeout=120)
    assert proc.returncode in (-signal.SIGKILL, 9), proc.stderr
    assert proc.stdout == b""


def calls(project):
    return [c[0] for c in tool_calls(project)]


@pytest.fixture
def dying(cli, project):
    (project / "project_tools.py").write_text(DYING_TOOLS)
    return cli


# (failpoint or None for "the tool dies", calls after the kill, calls after resume,
#  status after resume)
CASES = {
    "between-calls": ("before-step:create-role", ["create_project"],
                      ["create_project", "create_role"], "awaiting_input"),
    "before-call": ("before-call:create-role", ["create_project"], ["create_project"],
                    "failed"),
    "during-call": (None, ["create_project", "create_role"], ["create_project", "create_role"],
                    "failed"),
    "after-call-before-checkpoint": ("after-call:create-role", ["create_project", "create_role"],
                                     ["create_project", "create_role"], "awaiting_input"),
    "first-call-before-checkpoint": ("after-call:create-project", ["create_project"],
                                     ["create_project", "create_role"], "awaiting_input"),
}


@pytest.mark.parametrize("case", CASES, ids=list(CASES))
def test_kill_then_resume(dying, project, case):
    failpoint, after_kill, after_resume, status = CASES[case]
    if failpoint is None:
        (project / "die-in-create_role").touch()
    thread = dying("start", "create-project").json["thread_id"]
    killed_advance(dying, project, thread, failpoint)
    assert calls(project) == after_kill

    now = dying("current", thread).json
    assert now["status"] == "failed"
    assert now["completed"][0]["data"] == {**VALID, "admins": ["root"], "quota": 10}

    resumed = dying("recover", thread)
    assert resumed.json["status"] == status, resumed.json
    assert calls(project) == after_resume
    if status == "failed":  # unsafe and possibly done: only a person may send it again
        assert "may or may not have happened" in resumed.json["errors"][0]["message"]
        assert dying("recover", thread).json["status"] == "failed"
        assert calls(project) == after_resume
        retried = dying("advance", thread, "--gate-data", '{"action": "retry"}')
        assert retried.json["status"] == "awaiting_input", retried.json
        assert calls(project) == after_resume + ["create_role"]
    final = dying("advance", thread)
    assert final.json["status"] == "completed"
    assert final.code == 0
    keys = {c[1].get("project_id") for c in tool_calls(project) if c[0] == "create_role"}
    assert keys == {42}


def test_current_explains_each_stop(dying, project):
    thread = dying("start", "create-project").json["thread_id"]
    killed_advance(dying, project, thread, "after-call:create-role")
    assert dying("current", thread).json["errors"][0]["message"].startswith(
        "the run stopped after this step's call finished, before its result was saved")
    other = dying("start", "create-project").json["thread_id"]
    killed_advance(dying, project, other, "before-step:create-role")
    assert dying("current", other).json["errors"][0]["message"].startswith(
        "the run stopped before this step's call was sent")


def test_a_safe_tool_is_sent_again_automatically(dying, project):
    step = project / "workflows" / "create-project" / "references" / "03-create-role.md"
    step.write_text(step.read_text().replace("tool: create_role", "tool: create_role\n  idempotent: true"))
    (project / "die-in-create_role").touch()
    thread = dying("start", "create-project").json["thread_id"]
    killed_advance(dying, project, thread)
    assert "safe to repeat" in dying("current", thread).json["errors"][0]["message"]
    resumed = dying("recover", thread)
    assert resumed.json["status"] == "awaiting_input"
    assert calls(project) == ["create_project", "create_role", "create_role"]


def test_idempotency_key_reaches_the_tool_and_is_stable_across_a_resend(dying, project):
    step = project / "workflows" / "create-project" / "references" / "03-create-role.md"
    step.write_text(step.read_text().replace(
        "tool: create_role", "tool: create_role\n  idempotency_key: request_id"))
    (project / "die-in-create_role").touch()
    thread = dying("start", "create-project").json["thread_id"]
    killed_advance(dying, project, thread)
    dying("advance", thread, "--gate-data", '{"action": "retry"}')
    keys = [c[1]["request_id"] for c in tool_calls(project) if c[0] == "create_role"]
    assert keys == [f"{thread}:create-role:0", f"{thread}:create-role:0"]


def test_resume_on_a_run_that_did_not_stop_changes_nothing(dying, project):
    thread = dying("start", "create-project").json["thread_id"]
    assert dying("recover", thread).json["status"] == "awaiting_input"
    assert calls(project) == []


@pytest.fixture
def mcp_project(cli, project, toolbox):
    """The same workflow, its tools served by a real MCP test server that logs every call."""
    (project / "canal.yaml").unlink()
    toolbox.add("platform", [
        {"name": "create_project",
         "result": {"project": {"id": 42, "name": "billing", "admins": ["root"]}}},
        {"name": "create_role", "behavior": "slow", "seconds": 4,
         "result": {"role_id": "role-42"}},
    ])
    assert cli("discover").code == 0
    return toolbox


def mcp_calls(toolbox):
    return [c["tool"] for c in toolbox.calls("platform")]


def test_mcp_kill_during_a_call_never_resends_it_without_a_retry(cli, project, mcp_project):
    thread = cli("start", "create-project").json["thread_id"]
    proc = subprocess.Popen([sys.executable, "-m", "canal", "advance", thread, "--gate-data",
                             json.dumps(VALID)], cwd=project, env=cli.env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while mcp_calls(mcp_project) != ["create_project", "create_role"]:
        assert time.monotonic() < deadline and proc.poll() is None
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)  # canal dies while the server is inside create_role
    proc.communicate(timeout=30)

    assert "may or may not have happened" in cli("current", thread).json["errors"][0]["message"]
    assert cli("recover", thread).json["status"] == "failed"
    assert mcp_calls(mcp_project) == ["create_project", "create_role"]
    retried = cli("advance", thread, "--gate-data", '{"action": "retry"}')
    assert retried.json["status"] == "awaiting_input"
    assert mcp_calls(mcp_project) == ["create_project", "create_role", "create_role"]


def test_mcp_kill_while_the_server_starts_leaves_a_call_that_recovery_sends(cli, project,
                                                                            mcp_project):
    """Nothing was sent, so nothing is 'maybe sent': the call goes out on recovery."""
    thread = cli("start", "create-project").json["thread_id"]
    (project / "servers" / "platform" / "kill-client-at-start").touch()
    killed = subprocess.run([sys.executable, "-m", "canal", "advance", thread, "--gate-data",
                             json.dumps(VALID)], cwd=project, env=cli.env,
                            capture_output=True, timeout=60)
    assert killed.returncode == -signal.SIGKILL
    assert mcp_calls(mcp_project) == []
    assert cli("current", thread).json["errors"][0]["message"] == STOPPED["not_sent"]
    recovered = cli("recover", thread)
    assert recovered.json["status"] == "awaiting_input", recovered.json
    assert mcp_calls(mcp_project) == ["create_project", "create_role"]


def test_mcp_kill_after_a_call_replays_its_outcome(cli, project, mcp_project):
    thread = cli("start", "create-project").json["thread_id"]
    killed_advance(cli, project, thread, "after-call:create-role")
    assert mcp_calls(mcp_project) == ["create_project", "create_role"]
    resumed = cli("recover", thread)
    assert resumed.json["status"] == "awaiting_input"
    assert resumed.json["step"]["instructions"] == "Project 42 has role role-42."
    assert mcp_calls(mcp_project) == ["create_project", "create_role"]


@pytest.mark.parametrize("store", ["sqlite", "postgres"])
def test_a_start_killed_after_registering_leaves_no_run(cli, project, store,
                                                        postgres_schema_url):
    if store == "postgres":
        cli.env["CANAL_CHECKPOINTER"] = postgres_schema_url()
    for thread in ("again", "pruned"):
        proc = subprocess.run([sys.executable, "-m", "canal", "start", "create-project",
                               "--thread-id", thread], cwd=project,
                              env={**cli.env, "CANAL_FAILPOINTS": "after-register"},
                              capture_output=True, timeout=120)
        assert proc.returncode == -signal.SIGKILL, proc.stderr
    for args in (["current", "again"], ["abort", "again"], ["history", "again"]):
        gone = cli(*args)
        assert (gone.code, gone.json["error"]["code"]) == (4, "unknown_thread"), args
        assert gone.json["error"]["message"].startswith("no run with thread id 'again'")
    assert cli("runs").json["count"] == 0
    assert cli("start", "create-project", "--thread-id", "again").json["status"] == \
        "awaiting_input"
    pruned = cli("prune", "--older-than", "0s")
    assert pruned.code == 0 and pruned.json["unfinished_starts_removed"] == ["pruned"]
    assert [r["thread_id"] for r in cli("runs").json["runs"]] == ["again"]
    assert cli("start", "create-project", "--thread-id", "pruned").code == 0
