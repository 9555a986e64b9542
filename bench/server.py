"""Round trips through LangGraph Server: the shipped workflow served by ``langgraph dev``
(in-memory runtime, loopback) and driven by ``langgraph-sdk``, one HTTP call per step.

Each run: start to the first gate, a rejected answer, a valid answer (``create_project``
over MCP, then the next gate), the role (``create_role``, then the notification) and the
acknowledgement. Every call is ``runs.wait`` (the call returns when the run has paused or
ended), timed from the client. Server start-up is timed once.

Quick mode times only the start-up: a run takes about six seconds, and twenty of them
more than two minutes.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.rows import row
from tests.servers.langgraph_dev import copy_project, langgraph_dev

WORKFLOW = "create-permission-set"
CALLS = ("start", "rejected", "valid_tool_gate", "valid_tool_notification", "acknowledge")


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


def samples_ms(runs: int) -> tuple[float, dict[str, list[float]]]:
    """Milliseconds until ``langgraph dev`` is ready, and of each call over ``runs`` runs
    (after one warm-up run: first imports, the MCP server's first start)."""
    from langgraph_sdk import get_sync_client

    with tempfile.TemporaryDirectory() as tmp:
        project = Path(tmp)
        copy_project(project)
        began = time.perf_counter()
        with langgraph_dev(project) as url:
            ready = (time.perf_counter() - began) * 1000
            client = get_sync_client(url=url, timeout=60)
            samples: dict[str, list[float]] = {}
            if runs:
                one_run(client, -1, {})
            for index in range(runs):
                one_run(client, index, samples)
    return ready, samples


def server_rows(runs: int) -> list[dict[str, Any]]:
    """``langgraph_dev_ready`` and one ``langgraph_dev_<call>`` row (median ms) a call
    (none when ``runs`` is 0)."""
    ready, samples = samples_ms(runs)
    rows = [row("langgraph_dev_ready", ready, None, "ms", None,
                "`langgraph dev` (in-memory runtime, loopback) started until /ok answers"
                + ("" if runs else "; quick: the per-call rows are skipped (a warm-up run "
                   "and two timed runs take about 40 s)"))]
    if not runs:
        return rows
    for (label, values), name in zip(samples.items(), CALLS, strict=True):
        p90 = statistics.quantiles(values, n=10)[-1] if len(values) > 1 else values[0]
        rows.append(row(f"langgraph_dev_{name}", statistics.median(values), None, "ms", None,
                        f"runs.wait through `langgraph dev`, {label}: median of {runs} runs, "
                        f"p90 {p90:.0f} ms; about 1 s of it is the dev server's run queue, "
                        "which polls every 0.5 s"))
    return rows


def measure(quick: bool) -> list[dict[str, Any]]:
    return server_rows(0 if quick else 20)
