"""One writer per run: two processes advancing one thread at once, on SQLite and PostgreSQL."""

from __future__ import annotations

import json
import subprocess
import sys
import time

from tests.conftest import tool_calls

SLOW_TOOLS = '''
import json, pathlib, time
LOG = pathlib.Path(__file__).with_name("calls.jsonl")

def create_project(**kwargs):
    with LOG.open("a") as f:
        f.write(json.dumps(["create_project", kwargs]) + "\\n")
    pathlib.Path(__file__).with_name("inside").touch()
    time.sleep(6)  # long enough for a second process to start and try, even on a busy machine
    return {"project": {"id": 42, "name": kwargs["name"], "admins": kwargs["admins"]}}

def create_role(**kwargs):
    with LOG.open("a") as f:
        f.write(json.dumps(["create_role", kwargs]) + "\\n")
    return {"role_id": "role-%s" % kwargs["project_id"]}
'''


def test_two_advances_at_once_one_wins_one_conflicts(cli, process_cli, project, store_args):
    (project / "project_tools.py").write_text(SLOW_TOOLS)
    thread = cli(*store_args, "start", "create-project").json["thread_id"]
    command = [sys.executable, "-m", "canal", *store_args, "advance", thread, "--gate-data"]
    first = subprocess.Popen(command + [json.dumps({"project_name": "first",
                                                    "host": "first.example.com"})],
                             cwd=project, env=cli.env, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while not (project / "inside").exists():  # the first advance is inside its tool call
        assert time.monotonic() < deadline and first.poll() is None, first.communicate()
        time.sleep(0.05)
    second = process_cli(*store_args, "advance", thread, "--gate-data",
                         json.dumps({"project_name": "second", "host": "second.example.com"}))
    out, err = first.communicate(timeout=60)
    assert first.returncode == 0, err
    assert json.loads(out)["step"]["id"] == "summary"

    assert second.code == 6
    assert second.json["error"]["code"] == "conflict"
    assert second.json["error"]["message"] == (
        f"run {thread!r} is being changed by another process right now; nothing was "
        "applied, try again when it is done")
    assert [c[0] for c in tool_calls(project)] == ["create_project", "create_role"]
    assert tool_calls(project)[0][1]["name"] == "first"
    now = cli(*store_args, "current", thread).json
    assert now["completed"][0]["data"]["project_name"] == "first"
    assert cli(*store_args, "advance", thread).json["status"] == "completed"
