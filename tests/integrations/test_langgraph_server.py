"""The shipped workflow served by a real ``langgraph dev`` and driven by ``langgraph-sdk``
over HTTP: start, a rejected answer, valid answers, the notification's acknowledgement and
the final state, all through the server's own checkpointer."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_sync_client

from tests.conftest import project_steps, write_workflow
from tests.servers.langgraph_dev import copy_project, langgraph_dev

ENTRY = "canal.integrations.langgraph_server"
WORKFLOW = "create-permission-set"
PROJECT = {"project_name": "billing", "host": "billing.example.com", "auth_mode": 1,
           "admins": "ann,bob"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Any, Path]]:
    project = tmp_path_factory.mktemp("served")
    database = copy_project(project)
    with langgraph_dev(project) as url:
        yield get_sync_client(url=url, timeout=60), database


def column(database: Path, query: str) -> list[Any]:
    with sqlite3.connect(database) as conn:
        return [row[0] for row in conn.execute(query)]


def pause(output: dict[str, Any]) -> dict[str, Any]:
    (interrupt,) = output["__interrupt__"]
    return dict(interrupt["value"])


def test_the_server_runs_the_shipped_workflow_through_its_gates(served):
    client, database = served
    thread = client.threads.create()["thread_id"]

    first = pause(client.runs.wait(thread, WORKFLOW, input={}))
    assert first["step"]["id"] == "collect-project-info"
    assert set(first["step"]["gate"]) == set(PROJECT)

    bad = {**PROJECT, "host": "not a host"}
    del bad["admins"]
    again = pause(client.runs.wait(thread, WORKFLOW, command={"resume": bad}))
    assert again["step"]["id"] == "collect-project-info"
    assert again["missing"] == ["admins"] and [e["field"] for e in again["errors"]] == ["host"]
    assert column(database, "SELECT name FROM projects") == []  # nothing was called

    role = pause(client.runs.wait(thread, WORKFLOW, command={"resume": PROJECT}))
    assert role["step"]["id"] == "collect-role-info" and "billing" in role["step"]["instructions"]
    summary = pause(client.runs.wait(thread, WORKFLOW, command={
        "resume": {"role_name": "reader", "permissions": ["read"]}}))
    assert summary["step"]["type"] == "notification"

    # The server drops a falsy resume value: the run stays at the notification.
    for falsy in ({}, None):
        stays = pause(client.runs.wait(thread, WORKFLOW, command={"resume": falsy}))
        assert stays["step"]["id"] == "summary"
    done = client.runs.wait(thread, WORKFLOW, command={"resume": {"ack": True}})
    assert done["status"] == "completed" and "__interrupt__" not in done

    state = client.threads.get_state(thread)
    assert state["next"] == [] and state["values"]["status"] == "completed"
    assert state["values"]["gate"]["collect-project-info"] == PROJECT
    assert state["values"]["result"]["create-role"]["role_name"] == "reader"
    assert column(database, "SELECT name FROM projects") == ["billing"]
    assert column(database, "SELECT role_name FROM roles") == ["reader"]



def load_entry(project: Path, code: str) -> subprocess.CompletedProcess[str]:
    """Import the server's entry module in a new process started in ``project``, as
    ``langgraph dev`` does, and run ``code`` after it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CANAL_")}
    return subprocess.run([sys.executable, "-c", f"import {ENTRY} as m\n{code}"], cwd=project,
                          env=env, capture_output=True, text=True, timeout=60)


def test_the_entry_module_has_one_graph_per_workflow_and_nothing_else(tmp_path):
    for name in ("create-project", "second"):
        write_workflow(tmp_path / "workflows", name, project_steps())
    out = load_entry(tmp_path, "print({k: type(v).__name__ for k, v in vars(m).items() "
                               "if not k.startswith('_')})")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str({"create-project": "GuardedGraph",
                                      "second": "GuardedGraph"})


def test_an_invalid_workflow_stops_the_server_loading_with_its_problems(tmp_path):
    steps = project_steps()
    steps["02-create-project.md"][0]["automation"]["input_mapping"]["host"] = \
        "{{gate.collect-project-info.hots}}"
    write_workflow(tmp_path / "workflows", "create-project", steps)
    out = load_entry(tmp_path, "")
    assert out.returncode != 0
    assert "WorkflowInvalid" in out.stderr and "hots" in out.stderr
