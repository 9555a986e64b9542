"""Start-up of read-only commands: ``canal current``, ``runs``, ``index`` and ``meta TOOL``,
each a new process, against a process that only imports what a LangGraph + MCP program needs
(``langgraph.graph`` and ``langchain_mcp_adapters.client``).

The project: the bench workflow of ``bench.runtime`` with Python tools, one run started, and
the example platform's MCP server discovered (so ``index`` and ``meta`` read a real cache).
Rounds run every command once in turn, so a noisy moment spreads over all of them.

Usage: ``python -m bench.startup [--quick]`` from the repository root; prints JSON lines.
"""

from __future__ import annotations

import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

from bench.project import Project, example_server
from bench.rows import row, run_alone

NAMES = ("readonly_start_ratio", "start_current_ms", "start_runs_ms", "start_index_ms",
         "start_meta_ms")
BASELINE = "import langgraph.graph, langchain_mcp_adapters.client"


def _project(folder: Path) -> tuple[Project, dict[str, list[str]]]:
    """The project and the arguments of each read-only command to time."""
    from bench.runtime import STEPS
    from tests.conftest import write_workflow

    write_workflow(folder / "workflows", "flow", STEPS)
    (folder / "bench_tools.py").write_text("def make(name, host):\n    return {'id': 7}\n"
                                           "def role(project_id):\n    return {'role': 'r'}\n")
    (folder / "canal.yaml").write_text(
        "python_tools:\n  make: bench_tools:make\n  role: bench_tools:role\n")
    (folder / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"permission-platform": example_server(folder)}}))
    project = Project(folder)
    project.canal("discover")
    thread = project.canal("start", "flow")["thread_id"]
    return project, {"current": ["current", thread], "runs": ["runs"], "index": ["index"],
                     "meta": ["meta", "create_role"]}


def measure(quick: bool) -> list[dict[str, Any]]:
    rounds = 5 if quick else 15
    with tempfile.TemporaryDirectory() as tmp:
        project, commands = _project(Path(tmp))
        samples: dict[str, list[float]] = {name: [] for name in [*commands, "baseline"]}
        for _ in range(rounds):
            for name, args in commands.items():
                elapsed, done = project.run(*args)
                if done.returncode != 0:
                    raise RuntimeError(f"canal {name} exited {done.returncode}: "
                                       f"{done.stderr[-300:]}")
                samples[name].append(elapsed)
            samples["baseline"].append(project.python("-c", BASELINE)[0])
    ms = {name: statistics.median(found) * 1000 for name, found in samples.items()}
    slowest = max(commands, key=ms.__getitem__)
    base = ms["baseline"]
    figures = [row("readonly_start_ratio", ms[slowest], base, "ms", "ratio <= 0.5",
                   f"slowest median of `canal current`, `runs`, `index`, `meta TOOL` (here "
                   f"`{slowest}`), each a new process, against `python -c \"{BASELINE}\"`; "
                   f"medians of {rounds}")]
    figures += [row(f"start_{name}_ms", ms[name], base, "ms", None,
                    f"`canal {' '.join(args[:1])}` in a new process (SQLite, example "
                    f"platform discovered) against the import-only process; medians of "
                    f"{rounds}") for name, args in commands.items()]
    return figures


if __name__ == "__main__":
    run_alone(measure)
