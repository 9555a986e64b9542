"""What an agent that has never seen canal spends to finish each shipped workflow.

The scripted agent of ``tests/scripted_agent.py`` reads only ``next`` from each answer;
it leaves a required field out of its first answer (one rejection), and the name it
makes up for a project is taken already, so a step fails once and it goes back with
``edit``. Two figures per workflow: the calls it made after choosing the workflow against
the calls it needed at least (start, one answer per step that waits, one per answer that
did not move the run on), and the characters it read. Every call is a new process, as an
agent driving the CLI makes it.

Usage: ``python -m bench.agent`` from the repository root; prints JSON lines.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bench.project import ROOT, Project, example_server
from bench.rows import row, run_alone

NAMES = ("agent_calls",)


def measure(quick: bool) -> list[dict[str, Any]]:
    from tests.scripted_agent import drive

    figures = []
    with tempfile.TemporaryDirectory() as folder:
        project = Project(Path(folder))
        shutil.copytree(ROOT / "workflows", project.folder / "workflows")
        (project.folder / ".mcp.json").write_text(json.dumps(
            {"mcpServers": {"permission-platform": example_server(project.folder)}}))

        def canal(*args: str) -> Any:
            done = project.run(*args)[1]
            return SimpleNamespace(stdout=done.stdout, code=done.returncode)

        project.canal("discover")
        project.canal("call", "create_project", "--args", json.dumps(
            {"name": "project-name-1", "host": "x.example.com", "auth_mode": 0,
             "admins": "a"}))
        names = sorted(p.name for p in (project.folder / "workflows").iterdir()
                       if (p / "WorkFlow.md").exists())
        for name in names:
            steps = project.canal("show", name)["steps"]
            waits = sum(1 for s in steps if s["type"] in ("interactive", "notification"))
            tally = drive(canal, name)
            least = 1 + waits + tally.rejected + tally.failed + tally.answered_again
            how = (f"scripted agent, one new process a call; ended {tally.status}, "
                   f"{tally.rejected} rejected, {tally.failed} failed")
            figures += [
                row(f"agent_calls:{name}", len(tally.calls), least, "calls", None,
                    f"{how}; baseline: the least possible calls"),
                row(f"agent_chars:{name}", tally.chars, None, "characters", None,
                    f"{how}; characters of canal's output it read"),
            ]
    return figures


if __name__ == "__main__":
    run_alone(measure)
