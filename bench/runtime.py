"""Runtime figures, side by side in one run.

1. Start-up of read-only CLI commands (``current``, ``runs``) against ``start``, a writer.
2. ``advance`` latency for a gate + two chained tool calls on SQLite: canal against a
   hand-written LangGraph graph doing the same work on the same checkpointer.

Usage: ``.venv/bin/python bench/runtime.py [--runs N]``. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import operator
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, TypedDict

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.conftest import write_workflow  # noqa: E402

STEPS = {
    "01-ask.md": {"type": "interactive", "gate": {"schema": {
        "name": {"type": "string", "required": True}, "host": {"type": "string", "required": True}}}},
    "02-make.md": {"type": "automated", "automation": {"tool": "make", "input_mapping": {
        "name": "{{gate.ask.name}}", "host": "{{gate.ask.host}}"}}},
    "03-role.md": {"type": "automated", "automation": {"tool": "role", "input_mapping": {
        "project_id": "{{result.make.id}}"}}},
    "04-done.md": {"type": "notification"},
}


def make(name: str, host: str) -> dict:
    return {"id": 7, "name": name, "host": host}


def role(project_id: int) -> dict:
    return {"role": f"r-{project_id}"}


def merge(a: dict, b: dict) -> dict:
    return {**(a or {}), **(b or {})}


class State(TypedDict, total=False):
    gate: Annotated[dict, merge]
    result: Annotated[dict, merge]
    log: Annotated[list, operator.add]


def median_ms(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1000:.1f}"


@contextmanager
def workflow_dir() -> Iterator[Path]:
    """A temporary folder whose ``workflows`` holds the bench workflow ``flow``."""
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        write_workflow(workdir / "workflows", "flow", STEPS)
        yield workdir


def cli_startup(workdir: Path, runs: int) -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(workdir)}
    (workdir / "bench_tools.py").write_text(
        "def make(name, host):\n    return {'id': 7}\n"
        "def role(project_id):\n    return {'role': 'r'}\n")
    (workdir / "canal.yaml").write_text(
        "python_tools:\n  make: bench_tools:make\n  role: bench_tools:role\n")

    def timed(*args: str) -> tuple[float, str]:
        t = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "canal", *args], cwd=workdir, env=env,
                             capture_output=True, text=True, check=False)
        return time.perf_counter() - t, out.stdout

    import json

    figures: dict[str, list[float]] = {"start": [], "current": [], "runs": []}
    for _ in range(runs):
        elapsed, out = timed("start", "flow")
        figures["start"].append(elapsed)
        thread = json.loads(out)["thread_id"]
        figures["current"].append(timed("current", thread)[0])
        figures["runs"].append(timed("runs")[0])
    return figures


def canal_advance(workdir: Path, runs: int) -> list[float]:
    from canal import Canal, PythonTools

    canal = Canal(workflows=workdir / "workflows", home=workdir / "api",
                  tools=PythonTools({"make": make, "role": role}))
    samples = []
    for i in range(runs):
        thread = canal.start("flow", thread_id=f"api-{i}").thread_id
        t = time.perf_counter()
        env = canal.advance(thread, {"name": "n", "host": "h"})
        samples.append(time.perf_counter() - t)
        assert env.step.id == "done", env.to_json()
    canal.close()
    return samples


def langgraph_advance(workdir: Path, runs: int) -> list[float]:
    """The same work written by hand: interrupt, two tool nodes, interrupt."""
    from langgraph.checkpoint.sqlite import SqliteSaver
    from langgraph.graph import END, START, StateGraph
    from langgraph.types import Command, interrupt

    def ask(state: State) -> dict:
        return {"gate": {"ask": interrupt("ask")}}

    def make_node(state: State) -> dict:
        g = state["gate"]["ask"]
        return {"result": {"make": make(g["name"], g["host"])}, "log": ["make"]}

    def role_node(state: State) -> dict:
        return {"result": {"role": role(state["result"]["make"]["id"])}, "log": ["role"]}

    def done(state: State) -> dict:
        interrupt("done")
        return {}

    builder = StateGraph(State)
    for name, fn in (("ask", ask), ("make", make_node), ("role", role_node), ("done", done)):
        builder.add_node(name, fn)
    builder.add_edge(START, "ask")
    builder.add_edge("ask", "make")
    builder.add_edge("make", "role")
    builder.add_edge("role", "done")
    builder.add_edge("done", END)
    conn = sqlite3.connect(workdir / "hand.db", check_same_thread=False)
    graph = builder.compile(checkpointer=SqliteSaver(conn))
    samples = []
    for i in range(runs):
        config = {"configurable": {"thread_id": f"hand-{i}"}}
        graph.invoke({"gate": {}, "result": {}, "log": []}, config, durability="sync")
        t = time.perf_counter()
        graph.invoke(Command(resume={"name": "n", "host": "h"}), config, durability="sync")
        samples.append(time.perf_counter() - t)
    conn.close()
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    with workflow_dir() as workdir:
        cli = cli_startup(workdir, max(3, args.runs // 4))
        ours = canal_advance(workdir, args.runs)
        hand = langgraph_advance(workdir, args.runs)
    print("| measure | median ms |")
    print("|---|---|")
    for name in ("current", "runs", "start"):
        print(f"| `canal {name}` (new process, SQLite) | {median_ms(cli[name])} |")
    print(f"| `Canal.advance`: gate + 2 chained tools (SQLite, sync durability) | {median_ms(ours)} |")
    print(f"| hand-written LangGraph graph, same work | {median_ms(hand)} |")


if __name__ == "__main__":
    main()
