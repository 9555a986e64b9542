"""What an agent that has never seen canal spends to finish each shipped workflow.

The scripted agent of ``tests/scripted_agent.py`` reads only ``next`` from each answer;
it leaves a required field out of its first answer (one rejection), and the name it
makes up for a project is taken already, so a step fails once and it goes back with
``edit``. Each line: the workflow, the calls it made after choosing the workflow, the
calls it needed at least (start, one answer per step that waits, one per answer that did
not move the run on), and the characters it read. Every call is a new process, as an agent
driving the CLI makes it.

Usage: ``.venv/bin/python bench/agent.py``. Prints one JSON object per workflow.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.scripted_agent import drive  # noqa: E402

SERVER = ROOT / "examples" / "permission_platform" / "server.py"


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        project = Path(folder)
        shutil.copytree(ROOT / "workflows", project / "workflows")
        (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"permission-platform": {
            "command": sys.executable, "args": [str(SERVER)],
            "env": {"PERMISSION_PLATFORM_DB": str(project / "platform.db")}}}}))

        def canal(*args: str) -> Any:
            done = subprocess.run([sys.executable, "-m", "canal", *args], cwd=project,
                                  capture_output=True, text=True, check=False)
            return SimpleNamespace(stdout=done.stdout, code=done.returncode)

        canal("discover")
        canal("call", "create_project", "--args", json.dumps(
            {"name": "project-name-1", "host": "x.example.com", "auth_mode": 0,
             "admins": "a"}))
        names = sorted(p.name for p in (project / "workflows").iterdir()
                       if (p / "WorkFlow.md").exists())
        for name in names:
            steps = json.loads(canal("show", name).stdout)["steps"]
            waits = sum(1 for s in steps if s["type"] in ("interactive", "notification"))
            tally = drive(canal, name)
            least = 1 + waits + tally.rejected + tally.failed + tally.answered_again
            print(json.dumps({"workflow": name, "status": tally.status,
                              "calls": len(tally.calls), "least_calls": least,
                              "characters_read": tally.chars, "rejected": tally.rejected,
                              "failed": tally.failed}))


if __name__ == "__main__":
    main()
