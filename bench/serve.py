"""The cost of one call through ``canal serve`` against the same command through the CLI.

One long-lived ``canal serve`` (stdio, driven by an MCP SDK client) and a new ``canal``
process per command, on one SQLite store and one small workflow: a gate, two chained
Python tools, a notification. Timed: ``start`` (up to the gate), ``advance`` (the gate's
data, both tools, up to the notification) and ``current``, each from the client's side
(for the CLI: the whole process, start-up included, as an agent driving it pays). Then
the same ``advance`` where the step's tool is on an MCP server (the tests' toolbox server,
over stdio): serve keeps that server's session from one call to the next.

Usage: ``python bench/serve.py [--quick]`` from the repository root; prints JSON lines.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.rows import median_ms, row  # noqa: E402

NAMES = ("serve_call_ms", "serve_start_ms", "serve_advance_ms", "serve_current_ms",
         "serve_mcp_advance_ms")
COMMANDS = ("start", "advance", "current")
DATA = {"name": "billing", "host": "billing.example.com"}

TOOLS = '''
def make(name, host):
    return {"id": 7, "name": name, "host": host}

def role(project_id):
    return {"role": "r-%s" % project_id}
'''


def project(folder: Path) -> dict[str, str]:
    """Write the bench workflow ``flow``, its tools and ``canal.yaml`` into ``folder``; the
    environment a ``canal`` process there runs with."""
    from bench.runtime import STEPS
    from tests.conftest import Toolbox, schema, write_workflow

    write_workflow(folder / "workflows", "flow", STEPS)
    Toolbox(folder).add("box", [{"name": "remote_make",
                                 "inputSchema": schema("name", name="string")}])
    write_workflow(folder / "workflows", "remote", {
        "01-ask.md": STEPS["01-ask.md"], "03-done.md": STEPS["04-done.md"],
        "02-make.md": {"type": "automated", "automation": {
            "tool": "remote_make", "input_mapping": {"name": "{{gate.ask.name}}"}}}})
    (folder / "serve_tools.py").write_text(TOOLS)
    (folder / "canal.yaml").write_text(
        "python_tools:\n  make: serve_tools:make\n  role: serve_tools:role\n")
    env = {**os.environ, "PYTHONPATH": str(folder)}
    for name in ("CANAL_WORKFLOWS", "CANAL_HOME", "CANAL_CHECKPOINTER", "CANAL_MCP_CONFIG"):
        env.pop(name, None)
    subprocess.run([sys.executable, "-m", "canal", "discover"], cwd=folder, env=env,
                   capture_output=True, check=True)
    return env


def through_cli(folder: Path, env: dict[str, str], runs: int, workflow: str = "flow"
                ) -> dict[str, list[float]]:
    """Seconds per command on runs of ``workflow``, a new ``canal`` process each."""
    def timed(*args: str) -> tuple[float, dict[str, Any]]:
        began = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "canal", *args], cwd=folder, env=env,
                              capture_output=True, text=True, check=True)
        return time.perf_counter() - began, json.loads(done.stdout)

    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for i in range(runs):
        thread = f"cli-{workflow}-{i}"
        for name, args in (("start", ("start", workflow, "--thread-id", thread)),
                           ("advance", ("advance", thread, "--gate-data", json.dumps(DATA))),
                           ("current", ("current", thread))):
            elapsed, document = timed(*args)
            assert document.get("status") != "error", document
            samples[name].append(elapsed)
    return samples


async def _through_serve(folder: Path, env: dict[str, str], runs: int, workflow: str
                         ) -> dict[str, list[float]]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "canal", "serve"],
                                   cwd=str(folder), env=env)
    samples: dict[str, list[float]] = {name: [] for name in COMMANDS}
    with open(os.devnull, "w") as quiet:
        async with stdio_client(params, errlog=quiet) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            for i in range(-1, runs):  # the first round warms the server up: not counted
                thread = f"serve-{workflow}-{i}"
                for name, arguments in (
                        ("start", {"workflow": workflow, "thread_id": thread}),
                        ("advance", {"thread_id": thread, "gate_data": DATA}),
                        ("current", {"thread_id": thread})):
                    began = time.perf_counter()
                    result = await session.call_tool(name, arguments)
                    elapsed = time.perf_counter() - began
                    document = result.structuredContent or {}
                    assert document.get("status") != "error", document
                    if i >= 0:
                        samples[name].append(elapsed)
    return samples


def through_serve(folder: Path, env: dict[str, str], runs: int, workflow: str = "flow"
                  ) -> dict[str, list[float]]:
    """Seconds per tool call on runs of ``workflow``, all through one ``canal serve``."""
    import anyio

    return anyio.run(_through_serve, folder, env, runs, workflow)


def measure(quick: bool) -> list[dict[str, Any]]:
    cli_runs, serve_runs = (3, 10) if quick else (10, 50)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = project(folder)
        served = {name: median_ms(s) for name, s in through_serve(folder, env, serve_runs).items()}
        cli = {name: median_ms(s) for name, s in through_cli(folder, env, cli_runs).items()}
        remote_served = median_ms(through_serve(folder, env, serve_runs, "remote")["advance"])
        remote_cli = median_ms(through_cli(folder, env, 2 if quick else 5, "remote")["advance"])
    slowest = max(COMMANDS, key=lambda name: served[name])
    medians = "; ".join(f"{name} {served[name]:.1f} vs {cli[name]:.1f}" for name in COMMANDS)
    samples = f"{serve_runs} calls each through serve, {cli_runs} processes each for the CLI"
    rows = [row("serve_call_ms", served[slowest], cli[slowest], "ms", "<= 50 ms",
                f"slowest median through one canal serve ({slowest}) against the CLI's "
                f"median for it; medians serve vs CLI (ms): {medians}; {samples}; "
                "SQLite, gate + 2 chained Python tools + notification")]
    for name in COMMANDS:
        rows.append(row(f"serve_{name}_ms", served[name], cli[name], "ms", None,
                        f"median `{name}` through one canal serve (MCP stdio) against a new "
                        f"canal process; {samples}"))
    rows.append(row("serve_mcp_advance_ms", remote_served, remote_cli, "ms", None,
                    "median `advance` whose step calls a tool on an MCP server (stdio): "
                    f"through one canal serve ({serve_runs} calls, the server's session kept) "
                    f"against a new canal process ({2 if quick else 5}, each starting the "
                    "tool server)"))
    return rows


if __name__ == "__main__":
    for figure in measure("--quick" in sys.argv[1:]):
        print(json.dumps(figure), flush=True)
