"""The facade's async forms and its tool-event listener: ``astart``/``aadvance`` are
``start``/``advance`` run off the event loop, and ``on_event`` sees each tool call while it
runs."""

from __future__ import annotations

import asyncio
import itertools
import time
from typing import Any

from canal import Canal, PythonTools
from tests.conftest import project_steps, write_workflow

VALID = {"project_name": "billing", "host": "billing.example.com"}


def seen(events: list[dict[str, Any]]) -> list[str]:
    return [f"{e['phase']} {e['tool']}" for e in events]


def test_on_event_sees_each_call_start_before_the_tool_returns(workflows, tmp_path):
    write_workflow(workflows, "create-project", project_steps())
    events: list[dict[str, Any]] = []
    seen_at_call: list[list[str]] = []

    def tool(name: str) -> Any:
        def call(**kwargs: Any) -> Any:
            # The listener runs in the caller's thread while this call goes on: wait for it
            # to see this call's start (it never would if events came only at the end).
            deadline = time.monotonic() + 10
            while f"started {name}" not in seen(events) and time.monotonic() < deadline:
                time.sleep(0.01)
            seen_at_call.append(seen(events))
            return {"project": {"id": 1, "name": "n", "admins": ["a"]}, "role_id": "r"}
        return call

    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:",
                  tools=PythonTools({t: tool(t) for t in ("create_project", "create_role")}))
    canal.start("create-project", thread_id="t")
    canal.on_event = events.append
    env = canal.advance("t", VALID)
    assert env.step.id == "summary"
    assert seen_at_call == [["started create_project"],
                            ["started create_project", "finished create_project",
                             "started create_role"]]
    assert [(e["step"], e["phase"], e.get("ok")) for e in events] == [
        ("create-project", "started", None), ("create-project", "finished", True),
        ("create-role", "started", None), ("create-role", "finished", True)]


def test_aadvance_runs_advance_without_blocking_the_event_loop(workflows, tmp_path,
                                                              recorder):
    write_workflow(workflows, "create-project", project_steps())
    slow = recorder.create_project

    def create_project(**kwargs: Any) -> Any:
        time.sleep(1.5)
        return slow(**kwargs)

    canal = Canal(workflows=workflows, home=tmp_path / ".canal",
                  tools=PythonTools({"create_project": create_project,
                                     "create_role": recorder.create_role}))

    async def scenario() -> tuple[Any, list[float]]:
        started = await canal.astart("create-project", thread_id="t")
        assert started.step.id == "collect-project-info"
        ticks: list[float] = []
        task = asyncio.create_task(canal.aadvance("t", VALID, step="collect-project-info"))
        while not task.done():
            ticks.append(time.monotonic())
            await asyncio.sleep(0.02)
        return await task, ticks

    env, ticks = asyncio.run(scenario())
    canal.close()
    assert env.status == "awaiting_input" and env.step.id == "summary"
    assert [name for name, _ in recorder.calls] == ["create_project", "create_role"]
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    # the ticks cover the 1.5 s call (the last one comes up to a tick before the end) and
    # never stall: the loop kept running while advance worked in its thread
    assert ticks[-1] - ticks[0] >= 1.4 and max(gaps) < 1.0, (ticks[-1] - ticks[0], max(gaps))
    with Canal(workflows=workflows, home=tmp_path / ".canal") as again:
        assert again.current("t").step.id == "summary"


def test_a_failing_listener_never_stops_the_run(workflows, tmp_path, recorder, caplog):
    write_workflow(workflows, "create-project", project_steps())
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:",
                  tools=recorder.client())
    canal.start("create-project", thread_id="t")
    heard: list[dict[str, Any]] = []

    def listener(event: dict[str, Any]) -> None:
        heard.append(event)
        raise RuntimeError("the display broke")

    canal.on_event = listener
    env = canal.advance("t", VALID)
    assert env.step.id == "summary" and len(heard) == 1
    assert [name for name, _ in recorder.calls] == ["create_project", "create_role"]
    assert "on_event listener failed" in caplog.text
