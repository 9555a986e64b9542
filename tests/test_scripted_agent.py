"""An agent that has never seen canal finishes every shipped workflow from ``next`` alone,
with one rejection on the way (and in create-permission-set one failed step), and wastes no
call."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

from tests.conftest import ROOT, Cli
from tests.scripted_agent import drive

SHIPPED = sorted(p.name for p in (ROOT / "workflows").iterdir() if (p / "WorkFlow.md").exists())
SERVER = ROOT / "examples" / "permission_platform" / "server.py"


@pytest.fixture
def project(tmp_path: Path) -> Cli:
    """The shipped workflows and the example backend, tools discovered."""
    shutil.copytree(ROOT / "workflows", tmp_path / "workflows")
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"permission-platform": {
        "command": sys.executable, "args": [str(SERVER)],
        "env": {"PERMISSION_PLATFORM_DB": str(tmp_path / "platform.db")}}}}))
    cli = Cli(tmp_path)
    assert cli("discover").code == 0
    checked = cli("validate").json  # against the discovered tools and canal's built-in ones
    assert (checked["status"], checked["problem_count"]) == ("ok", 0), checked
    return cli


@pytest.mark.parametrize("workflow", SHIPPED)
def test_a_new_agent_finishes_a_shipped_workflow_from_next_alone(project, workflow):
    # The name the agent will make up is taken already: its create step fails once.
    taken = project("call", "create_project", "--args", json.dumps(
        {"name": "project-name-1", "host": "x.example.com", "auth_mode": 0, "admins": "a"}))
    assert taken.code == 0
    steps = project("show", workflow).json["steps"]
    waits = sum(1 for s in steps if s["type"] in ("interactive", "notification"))

    tally = drive(project, workflow)

    assert tally.status == "completed"
    # Only create-permission-set's create step meets the taken name; create-workflow's
    # steps call canal's own tools, which the made-up data satisfies at once.
    failures = 1 if workflow == "create-permission-set" else 0
    assert tally.rejected == 1
    assert tally.failed == failures and tally.answered_again == failures
    # Not one call wasted: start, one answer per step that waits, and one per answer that
    # did not move the run on.
    assert len(tally.calls) == (1 + waits + tally.rejected + tally.failed
                                + tally.answered_again)
    assert tally.calls[0] == "start" and set(tally.calls[1:]) == {"advance"}
    assert tally.chars < 60_000
