"""A project folder for the benchmarks that drive canal's command line, one process a call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SERVER = ROOT / "examples" / "permission_platform" / "server.py"


def example_server(project: Path) -> dict[str, Any]:
    """The ``.mcp.json`` entry of the example platform, its database in ``project``."""
    return {"command": sys.executable, "args": [str(SERVER)],
            "env": {"PERMISSION_PLATFORM_DB": str(project / "platform.db")}}


class Project:
    """A project folder; ``run`` starts ``python -m canal`` there, as an agent would."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(folder), str(ROOT)])}
        for name in ("CANAL_WORKFLOWS", "CANAL_HOME", "CANAL_CHECKPOINTER", "CANAL_MCP_CONFIG"):
            self.env.pop(name, None)

    def run(self, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
        """Seconds taken and the finished ``canal`` process."""
        return self.python("-m", "canal", *args)

    def python(self, *args: str) -> tuple[float, subprocess.CompletedProcess[str]]:
        began = time.perf_counter()
        done = subprocess.run([sys.executable, *args], cwd=self.folder, env=self.env,
                              capture_output=True, text=True, check=False, timeout=300)
        return time.perf_counter() - began, done

    def output(self, *args: str) -> str:
        """What ``canal args`` prints; raises when the command fails."""
        _, done = self.run(*args)
        if done.returncode != 0:
            raise RuntimeError(f"canal {' '.join(args)} exited {done.returncode}: "
                               f"{(done.stdout + done.stderr)[-300:]}")
        return done.stdout

    def canal(self, *args: str) -> Any:
        """The JSON document ``canal args`` prints; raises when the command fails."""
        return json.loads(self.output(*args))
