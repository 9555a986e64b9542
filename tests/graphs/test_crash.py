"""A process killed in the middle of a tool call, then recovered with LangGraph's own API:
``invoke(None)`` goes on from the last checkpoint and never sends an unsafe call twice.

Runs over canal's own SQLite store and over a saver object the user passes in, whose call
journal canal keeps durably beside it."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from langgraph.types import Command

from tests.conftest import DYING_TOOLS, ROOT, project_steps, write_workflow

VALID = {"project_name": "billing", "host": "billing.example.com"}
OPEN = '''
import sqlite3, sys
from pathlib import Path
from langgraph.types import Command
from canal import Canal, PythonTools
import project_tools

here = Path(sys.argv[1])
if sys.argv[2] == "saver":
    from langgraph.checkpoint.sqlite import SqliteSaver
    checkpointer = SqliteSaver(sqlite3.connect(here / "mine.db", check_same_thread=False))
else:
    checkpointer = f"sqlite:///{here / 'state.db'}"
canal = Canal(workflows=here / "workflows", home=here / "home", checkpointer=checkpointer,
              tools=PythonTools({"create_project": project_tools.create_project,
                                 "create_role": project_tools.create_role}))
graph = canal.compile("create-project")
config = {"configurable": {"thread_id": "t"}}
'''


def calls(folder: Path) -> list[str]:
    log = folder / "calls.jsonl"
    return [json.loads(line)[0] for line in log.read_text().splitlines()] if log.exists() else []


def run(folder: Path, store: str, body: str) -> subprocess.CompletedProcess[str]:
    script = OPEN + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", script, str(folder), store], cwd=folder,
                          env={"PYTHONPATH": f"{folder}:{ROOT}", "PATH": "/usr/bin:/bin"},
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("store", ["url", "saver"])
def test_kill_mid_call_then_recover_never_resends_without_a_retry(tmp_path, store):
    write_workflow(tmp_path / "workflows", "create-project", project_steps())
    (tmp_path / "project_tools.py").write_text(DYING_TOOLS)
    (tmp_path / "die-in-create_role").touch()
    killed = run(tmp_path, store, f"""
        graph.invoke({{}}, config)
        graph.invoke(Command(resume={VALID!r}), config)
    """)
    assert killed.returncode == 9, killed.stderr
    assert calls(tmp_path) == ["create_project", "create_role"]

    recovered = run(tmp_path, store, """
        out = graph.invoke(None, config)
        print(json.dumps(out["__interrupt__"][0].value))
    """.replace("print(", "import json; print("))
    assert recovered.returncode == 0, recovered.stderr
    value = json.loads(recovered.stdout)
    assert value["step"]["id"] == "create-role"
    assert value["errors"][0]["kind"] == "in_flight"
    assert "may or may not have happened" in value["errors"][0]["message"]
    assert calls(tmp_path) == ["create_project", "create_role"]  # not sent again

    retried = run(tmp_path, store, """
        out = graph.invoke(Command(resume={"action": "retry"}), config)
        print(out["__interrupt__"][0].value["step"]["instructions"])
    """)
    assert retried.returncode == 0, retried.stderr
    assert retried.stdout.strip() == "Project 42 has role role-42."
    assert calls(tmp_path) == ["create_project", "create_role", "create_role"]
