"""A process killed after a node stored its writes but before the next checkpoint.

LangGraph keeps a finished task's writes and applies them on the next ``invoke`` without
running the node again, so the dead process's answer would beat the one a person gives
next. canal shows those writes (``current``) and drops them before it applies an answer.
Each case kills a real process at the saver's ``put_writes`` of one channel."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import ROOT, tool_calls

VALID = {"project_name": "billing", "host": "billing.example.com"}
DEFAULTS = {"admins": ["root"], "quota": 10}
SCRIPT = '''
import json, os, sqlite3, sys, threading
from pathlib import Path
from langgraph.checkpoint.sqlite import SqliteSaver
from canal import Canal

here, kill_at, op, data = Path(sys.argv[1]), sys.argv[2], sys.argv[3], json.loads(sys.argv[4])


class DiesAfterWrites(SqliteSaver):
    """Its process dies once a node's writes to channel ``kill_at`` are stored and before
    the checkpoint that applies them is. (LangGraph stores the two from different threads,
    in either order, so the checkpoint waits for the writes.)"""

    stored = threading.Event()

    def put_writes(self, config, writes, task_id, task_path=""):
        super().put_writes(config, writes, task_id, task_path)
        if any(channel == kill_at for channel, _ in writes):
            self.stored.set()

    def put(self, config, checkpoint, metadata, new_versions):
        if kill_at and kill_at in new_versions:
            self.stored.wait(30)
            os._exit(9)
        return super().put(config, checkpoint, metadata, new_versions)


saver = DiesAfterWrites(sqlite3.connect(here / "mine.db", check_same_thread=False))
canal = Canal(home=here / ".canal", checkpointer=saver)
if op == "start":
    env = canal.start("create-project", thread_id="t")
elif op == "advance":
    env = canal.advance("t", data)
else:
    env = canal.current("t")
print(json.dumps(env.to_json()))
'''


def canal_in(project: Path, op: str, data: Any = None, kill_at: str = "") -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(project), kill_at, op,
                           json.dumps(data)], cwd=project, capture_output=True, text=True,
                          env={"PYTHONPATH": f"{project}:{ROOT}", "PATH": "/usr/bin:/bin"},
                          timeout=120)
    if kill_at:
        assert done.returncode == 9, done.stderr
        return {}
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_a_corrected_submission_beats_the_typo_a_dead_process_took(project):
    canal_in(project, "start")
    typo = {"project_name": "bilnig", "host": "billing.example.com"}
    canal_in(project, "advance", typo, kill_at="gate")

    current = canal_in(project, "current")
    assert current["status"] == "awaiting_input"
    assert current["step"]["id"] == "collect-project-info"
    assert current["unsaved"]["data"] == {**typo, **DEFAULTS}
    assert current["unsaved"]["dropped"] is False
    assert [e["kind"] for e in current["unsaved"]["entries"]] == ["submit"]
    assert "not applied" in current["unsaved"]["note"]

    env = canal_in(project, "advance", VALID)
    assert env["status"] == "awaiting_input" and env["step"]["id"] == "summary"
    assert env["unsaved"]["dropped"] is True and env["unsaved"]["data"] == {**typo, **DEFAULTS}
    assert [kwargs["name"] for name, kwargs in tool_calls(project)
            if name == "create_project"] == ["billing"]
    assert "unsaved" not in canal_in(project, "current")


def test_an_abort_beats_the_retry_a_dead_process_took(project):
    (project / "fail_role").touch()
    canal_in(project, "start")
    failed = canal_in(project, "advance", VALID)
    assert failed["status"] == "failed" and failed["step"]["id"] == "create-role"
    canal_in(project, "advance", {"action": "retry"}, kill_at="attempts")

    current = canal_in(project, "current")
    assert current["status"] == "failed"
    assert current["unsaved"]["data"] == {"action": "retry"}

    env = canal_in(project, "advance", {"action": "abort"})
    assert env["status"] == "aborted" and env["executed"] == []
    assert [name for name, _ in tool_calls(project)] == ["create_project", "create_role"]
