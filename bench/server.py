"""Round trips through LangGraph Server: the shipped workflow served by ``langgraph dev``
(in-memory runtime, loopback) and driven by ``langgraph-sdk``, one HTTP call per step.

Each run: start to the first gate, a rejected answer, a valid answer (``create_project``
over MCP, then the next gate), the role (``create_role``, then the notification) and the
acknowledgement. Every call is ``runs.wait`` (the call returns when the run has paused or
ended), timed from the client. Server start-up is timed once.

Usage: ``.venv/bin/python bench/server.py [--runs N]``. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.servers.langgraph_dev import copy_project, langgraph_dev  # noqa: E402

WORKFLOW = "create-permission-set"


def timed(samples: dict[str, list[float]], label: str, call: Callable[[], Any]) -> Any:
    began = time.perf_counter()
    out = call()
    samples.setdefault(label, []).append((time.perf_counter() - began) * 1000)
    return out


def one_run(client: Any, index: int, samples: dict[str, list[float]]) -> None:
    thread = client.threads.create()["thread_id"]

    def wait(**kwargs: Any) -> Any:
        return lambda: client.runs.wait(thread, WORKFLOW, **kwargs)

    project = {"project_name": f"p{index}", "host": f"p{index}.example.com", "auth_mode": 1,
               "admins": "ann"}
    timed(samples, "start: to the first gate", wait(input={}))
    timed(samples, "resume, rejected (no tool)", wait(command={"resume": {"host": "x"}}))
    timed(samples, "resume, valid: 1 MCP tool, next gate", wait(command={"resume": project}))
    timed(samples, "resume, valid: 1 MCP tool, notification",
          wait(command={"resume": {"role_name": "reader"}}))
    out = timed(samples, "resume: acknowledge the notification (end)",
                wait(command={"resume": {"ack": True}}))
    assert out["status"] == "completed", out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args()
    from langgraph_sdk import get_sync_client

    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        copy_project(project)
        began = time.perf_counter()
        with langgraph_dev(project) as url:
            ready = (time.perf_counter() - began) * 1000
            client = get_sync_client(url=url, timeout=60)
            samples: dict[str, list[float]] = {}
            one_run(client, -1, {})  # warm-up: first imports, the MCP server's first start
            for index in range(args.runs):
                one_run(client, index, samples)
    print(f"`langgraph dev` ready after {ready:.0f} ms; medians of {args.runs} runs\n")
    print("| call (`runs.wait`) | median ms | p90 ms |\n|---|---|---|")
    for label, values in samples.items():
        p90 = statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]
        print(f"| {label} | {statistics.median(values):.0f} | {p90:.0f} |")


if __name__ == "__main__":
    main()
