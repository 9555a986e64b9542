"""The compiled graph under ``ainvoke``/``astream``: the same nodes as ``invoke``, the
store's own savers, a slow MCP call that leaves the event loop free, and the two streams a
client watches (``updates``: one entry per step; ``custom``: tool events)."""

from __future__ import annotations

import asyncio
import itertools
import time
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from canal import Canal
from canal.nodes.events import ToolEvents
from tests.conftest import schema, write_workflow

STEPS = {
    "01-ask.md": {"type": "interactive", "gate": {"schema": {
        "name": {"type": "string", "required": True}}}},
    "02-make.md": {"type": "automated", "automation": {
        "tool": "make", "input_mapping": {"name": "{{gate.ask.name}}"}}},
    "03-role.md": {"type": "automated", "automation": {
        "tool": "role", "input_mapping": {"of": "{{result.make.arguments.name}}"}}},
    "04-done.md": {"type": "notification"},
}


def config(thread: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


@pytest.fixture
def mcp_canal(tmp_path: Path, toolbox: Any, workflows: Path, request: Any) -> Any:
    """A Canal over the real MCP test server: ``make`` (slow: 1.5 s) and ``role``, with
    the checkpointer the test's ``checkpointer_url`` parameter names (default SQLite)."""
    toolbox.add("box", [{"name": "make", "behavior": "slow", "seconds": 1.5,
                         "inputSchema": schema("name", name="string")},
                        {"name": "role"},
                        {"name": "broken", "behavior": "error", "result": "quota exceeded"}])
    write_workflow(workflows, "flow", STEPS)
    url = getattr(request, "param", f"sqlite:///{tmp_path / 'state.db'}")
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer=url,
                  mcp_config=tmp_path / ".mcp.json")
    canal.discover()
    yield canal
    canal.close()


def test_a_slow_mcp_call_under_ainvoke_leaves_the_event_loop_free(mcp_canal):
    graph = mcp_canal.compile("flow")

    async def scenario() -> tuple[list[float], dict[str, Any]]:
        await graph.ainvoke({}, config())
        ticks: list[float] = []
        done = asyncio.Event()

        async def heartbeat() -> None:
            while not done.is_set():
                ticks.append(time.monotonic())
                await asyncio.sleep(0.02)

        beat = asyncio.create_task(heartbeat())
        try:
            out = await graph.ainvoke(Command(resume={"name": "n"}), config())
        finally:
            done.set()
            await beat
        return ticks, out

    ticks, out = asyncio.run(scenario())
    assert out["result"]["make"]["arguments"] == {"name": "n"}
    assert out["__interrupt__"][0].value["step"]["id"] == "done"
    # The call took 1.5 s; a loop blocked by it would show one gap of that length.
    gaps = [b - a for a, b in itertools.pairwise(ticks)]
    assert ticks[-1] - ticks[0] >= 1.5
    assert max(gaps) < 1.0, max(gaps)


@pytest.mark.parametrize("mcp_canal", ["memory:"], indirect=True)
def test_astream_custom_events_report_each_tool_call_as_it_runs(mcp_canal):
    graph = mcp_canal.compile("flow")

    async def scenario() -> list[tuple[float, dict[str, Any]]]:
        await graph.ainvoke({}, config())
        return [(time.monotonic(), event) async for event in graph.astream(
            Command(resume={"name": "n"}), config(), stream_mode="custom")]

    seen = asyncio.run(scenario())
    events = [event for _, event in seen]
    assert [(e["phase"], e["step"], e["tool"]) for e in events] == [
        ("started", "make", "make"), ("finished", "make", "make"),
        ("started", "role", "role"), ("finished", "role", "role")]
    started, finished = events[0], events[1]
    assert set(started) == {"event", "phase", "step", "tool", "started"}
    assert set(finished) == {"event", "phase", "step", "tool", "started", "finished",
                             "duration", "ok"}
    assert started["event"] == finished["event"] == "tool"
    assert finished["ok"] is True and finished["started"] == started["started"]
    assert 1.5 <= finished["duration"] < 30 and finished["finished"] > finished["started"]
    # "started" reached the client while the call was still running, not with its end.
    assert seen[1][0] - seen[0][0] >= 1.0


@pytest.mark.parametrize("mcp_canal", ["memory:"], indirect=True)
def test_a_failed_call_streams_ok_false(mcp_canal, workflows):
    write_workflow(workflows, "bad", {
        "01-go.md": {"type": "automated", "automation": {"tool": "broken"}}})
    graph = mcp_canal.compile("bad")
    events = list(graph.stream({}, config(), stream_mode="custom"))
    assert [(e["phase"], e["step"], e.get("ok")) for e in events] == [
        ("started", "go", None), ("finished", "go", False)]


def test_updates_stream_one_entry_per_step(tmp_path, workflows):
    from canal import PythonTools

    write_workflow(workflows, "flow", STEPS)
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:",
                  tools=PythonTools({"make": lambda name: {"arguments": {"name": name}},
                                     "role": lambda of: {"role": of}}))
    graph = canal.compile("flow")

    async def scenario() -> list[Any]:
        await graph.ainvoke({}, config())
        return [chunk async for chunk in graph.astream(
            Command(resume={"name": "n"}), config(), stream_mode="updates")]

    chunks = asyncio.run(scenario())
    assert [next(iter(c)) for c in chunks] == ["ask", "make", "role", "__interrupt__"]
    assert chunks[1]["make"]["result"] == {"make": {"arguments": {"name": "n"}}}
    # The same through the synchronous stream, with several modes and version 2 parts.
    graph.invoke({}, config("u"))
    parts = list(graph.stream(Command(resume={"name": "n"}), config("u"),
                              stream_mode=["updates", "custom"], version="v2"))
    updates = [next(iter(p["data"])) for p in parts if p["type"] == "updates"]
    assert updates == ["ask", "make", "role", "__interrupt__"]
    assert [p["data"]["phase"] for p in parts if p["type"] == "custom"] == [
        "started", "finished", "started", "finished"]


def test_a_tool_event_outside_a_run_is_dropped():
    events = ToolEvents("step", "tool")  # no graph runs here: nothing to write to
    events.finished(True)
    assert events.started
