"""Several worker processes serving the same runs on one PostgreSQL database."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter

from tests.conftest import tool_calls

WORKER = r'''
import json, sys, time
from canal import Canal, RunStateError

url, threads = sys.argv[1], json.loads(sys.argv[2])
canal = Canal(checkpointer=url)
pending, advanced, deadline = set(threads), 0, time.monotonic() + 120
while pending and time.monotonic() < deadline:
    for thread in sorted(pending, key=lambda t: hash((t, time.monotonic()))):
        now = canal.current(thread)
        if now.status == "completed":
            pending.discard(thread)
            continue
        data = ({"project_name": thread, "host": "w.example.com"}
                if now.step.id == "collect-project-info" else {})
        try:
            env = canal.advance(thread, data, step=now.step.id)
        except RunStateError:  # another worker holds it (conflict) or just finished it
            continue
        if env.status not in ("stale", "awaiting_input", "completed"):
            raise SystemExit(f"unexpected {env.status}: {env.errors}")
        advanced += env.status != "stale"
print(json.dumps({"advanced": advanced, "left": sorted(pending)}))
'''


def test_four_workers_complete_many_runs_without_loss_or_duplication(cli, project,
                                                                     postgres_schema_url):
    url = postgres_schema_url()
    threads = [cli("--checkpointer", url, "start", "create-project").json["thread_id"]
               for _ in range(16)]
    workers = [subprocess.Popen([sys.executable, "-c", WORKER, url, json.dumps(threads)],
                                cwd=project, env=cli.env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True) for _ in range(4)]
    reports = []
    for worker in workers:
        out, err = worker.communicate(timeout=300)
        assert worker.returncode == 0, err
        reports.append(json.loads(out))
    assert all(r["left"] == [] for r in reports)
    assert sum(r["advanced"] for r in reports) == 2 * len(threads)  # two pauses per run

    calls = Counter((c[0], c[1]["name"] if c[0] == "create_project" else None)
                    for c in tool_calls(project))
    assert sum(calls.values()) == 2 * len(threads)
    assert {calls[("create_project", t)] for t in threads} == {1}
    assert calls[("create_role", None)] == len(threads)
    listed = cli("--checkpointer", url, "runs").json["runs"]
    assert {r["thread_id"] for r in listed} == set(threads)
    assert {r["status"] for r in listed} == {"completed"}
    for thread in threads[:4]:
        kinds = [e["kind"] for e in cli("--checkpointer", url, "history", thread).json["entries"]]
        assert kinds == ["start", "submit", "tool", "tool", "acknowledge"]


def test_a_pool_too_small_for_a_locked_write_is_a_config_error(cli, postgres_schema_url):
    url = postgres_schema_url()
    for size in ("1", "0", "101"):
        began = time.monotonic()
        refused = cli("--checkpointer", f"{url}&pool_size={size}", "start", "create-project")
        assert (refused.code, refused.json["error"]["code"]) == (8, "config")
        assert refused.json["error"]["message"] == (
            "pool_size in the PostgreSQL URL must be from 2 to 100: a run's writer lock "
            "holds one connection while its checkpoints and journal use another")
        assert time.monotonic() - began < 5
    assert cli("--checkpointer", url, "runs").json["count"] == 0


def test_the_smallest_pool_serves_every_command(cli, project, postgres_schema_url):
    url = postgres_schema_url() + "&pool_size=2&connect_timeout=3"
    began = time.monotonic()
    run = lambda *args: cli("--checkpointer", url, *args)  # noqa: E731
    thread = run("start", "create-project").json["thread_id"]
    env = run("advance", thread, "--gate-data", json.dumps({"project_name": "p",
                                                            "host": "p.example.com"})).json
    assert [e["tool"] for e in env["executed"]] == ["create_project", "create_role"]
    other = run("start", "create-project").json["thread_id"]
    assert run("abort", other).json["status"] == "aborted"
    assert run("advance", thread).json["status"] == "completed"
    assert run("prune", "--older-than", "0s").json["count"] == 2
    assert time.monotonic() - began < 20
