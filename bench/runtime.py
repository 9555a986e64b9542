"""``advance`` latency: one gate answer that runs two chained tool calls, on SQLite with sync
durability, through canal against a hand-written LangGraph graph doing the same work on the
same kind of checkpointer.

The headline figure is ``Canal.advance`` (encrypted state, call journal) against the graph
written by hand. Informational figures show what the async paths cost: canal has one
implementation of a run, its nodes are synchronous, LangGraph runs them in a worker thread
under ``ainvoke``/``astream``, and the store's SQLite saver gets its async methods by running
the synchronous ones in a thread (``canal.checkpoints.threaded``). Each is held against
canal's compiled graph run with ``invoke`` on the store's saver.

Usage: ``python -m bench.runtime [--quick]`` from the repository root; prints JSON lines.
"""

from __future__ import annotations

import asyncio
import itertools
import operator
import sqlite3
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypedDict

from bench.rows import median_ms, row, run_alone

NAMES = ("advance_overhead_ratio", "advance_events_ms", "aadvance_ms", "graph_invoke_ms",
         "graph_ainvoke_ms", "graph_ainvoke_aiosqlite_ms")

STEPS = {
    "01-ask.md": {"type": "interactive", "gate": {"schema": {
        "name": {"type": "string", "required": True},
        "host": {"type": "string", "required": True}}}},
    "02-make.md": {"type": "automated", "automation": {"tool": "make", "input_mapping": {
        "name": "{{gate.ask.name}}", "host": "{{gate.ask.host}}"}}},
    "03-role.md": {"type": "automated", "automation": {"tool": "role", "input_mapping": {
        "project_id": "{{result.make.id}}"}}},
    "04-done.md": {"type": "notification"},
}
ANSWER = {"name": "n", "host": "h"}


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


@contextmanager
def workflow_dir() -> Iterator[Path]:
    """A temporary folder whose ``workflows`` holds the bench workflow ``flow``."""
    from tests.conftest import write_workflow

    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        write_workflow(workdir / "workflows", "flow", STEPS)
        yield workdir


def new_canal(workdir: Path, home: str) -> Any:
    from canal import Canal, PythonTools

    return Canal(workflows=workdir / "workflows", home=workdir / home,
                 tools=PythonTools({"make": make, "role": role}))


Sampler = Iterator[float]  # each ``next`` times one advance, in seconds


def facade(workdir: Path, mode: str) -> Sampler:
    """``advance`` through the facade: ``sync``, ``events`` (with a listener) or ``async``
    (``aadvance``, every sample in one event loop)."""
    canal = new_canal(workdir, f"facade-{mode}")
    if mode == "events":
        canal.on_event = lambda event: None
    loop = asyncio.new_event_loop()
    try:
        for i in itertools.count():
            thread = canal.start("flow", thread_id=f"{mode}-{i}").thread_id
            began = time.perf_counter()
            if mode == "async":
                env = loop.run_until_complete(canal.aadvance(thread, ANSWER))
            else:
                env = canal.advance(thread, ANSWER)
            yield time.perf_counter() - began
            assert env.step.id == "done", env.to_json()
    finally:
        loop.close()
        canal.close()


def hand_written(workdir: Path) -> Sampler:
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
    try:
        for i in itertools.count():
            config = {"configurable": {"thread_id": f"hand-{i}"}}
            graph.invoke({"gate": {}, "result": {}, "log": []}, config, durability="sync")
            began = time.perf_counter()
            graph.invoke(Command(resume=ANSWER), config, durability="sync")
            yield time.perf_counter() - began
    finally:
        conn.close()


def graph_run(workdir: Path, mode: str) -> Sampler:
    """canal's compiled graph: ``invoke`` on the store's SQLite saver (``sync``), ``ainvoke``
    on it (``async``), or ``ainvoke`` on an ``AsyncSqliteSaver`` of its own file
    (``aiosqlite``); the async ones run every sample in one event loop."""
    from langgraph.types import Command

    async def own_saver() -> tuple[Any, Any]:
        import aiosqlite
        from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

        conn = await aiosqlite.connect(workdir / "aio.db")
        return conn, AsyncSqliteSaver(conn)  # it takes the running loop as its own

    canal = new_canal(workdir, f"graph-{mode}")
    loop = asyncio.new_event_loop()
    conn = None

    def invoke(value: Any, config: dict[str, Any]) -> Any:
        if mode == "sync":
            return graph.invoke(value, config)
        return loop.run_until_complete(graph.ainvoke(value, config))

    try:
        if mode == "aiosqlite":
            conn, saver = loop.run_until_complete(own_saver())
            graph = canal.compile("flow", checkpointer=saver)
        else:
            graph = canal.compile("flow")
        for i in itertools.count():
            config = {"configurable": {"thread_id": f"g-{i}"}}
            invoke({}, config)
            began = time.perf_counter()
            out = invoke(Command(resume=ANSWER), config)
            yield time.perf_counter() - began
            assert out["__interrupt__"][0].value["step"]["id"] == "done"
    finally:
        if conn is not None:
            loop.run_until_complete(conn.close())
        loop.close()
        canal.close()


def interleaved(samplers: dict[str, Sampler], runs: int) -> dict[str, float]:
    """The median milliseconds of each sampler over ``runs`` rounds that take one sample of
    each in turn (after one round not counted, which compiles and warms up), so a busy moment
    of the machine falls on every variant alike."""
    samples: dict[str, list[float]] = {name: [] for name in samplers}
    try:
        for round_ in range(runs + 1):
            for name, sampler in samplers.items():
                elapsed = next(sampler)
                if round_:
                    samples[name].append(elapsed)
    finally:
        for sampler in samplers.values():
            sampler.close()
    return {name: median_ms(found) for name, found in samples.items()}


INFORMATIONAL = {
    "advance_events_ms": "`Canal.advance` with an `on_event` listener",
    "aadvance_ms": "`await Canal.aadvance` (advance in a worker thread)",
    "graph_ainvoke_ms": "canal's graph, `ainvoke` on the store's SQLite saver (async methods "
                        "in threads)",
    "graph_ainvoke_aiosqlite_ms": "canal's graph, `ainvoke` on LangGraph's `AsyncSqliteSaver` "
                                  "(aiosqlite)",
}


def measure(quick: bool) -> list[dict[str, Any]]:
    runs = 10 if quick else 30
    what = "gate + 2 chained tools, SQLite, sync durability"
    with workflow_dir() as workdir:
        ms = interleaved({
            "advance": facade(workdir, "sync"), "hand": hand_written(workdir),
            "graph_invoke_ms": graph_run(workdir, "sync"),
            "advance_events_ms": facade(workdir, "events"),
            "aadvance_ms": facade(workdir, "async"),
            "graph_ainvoke_ms": graph_run(workdir, "async"),
            "graph_ainvoke_aiosqlite_ms": graph_run(workdir, "aiosqlite")}, runs)
    how = f"medians of {runs}, every variant sampled in turn"
    return [
        row("advance_overhead_ratio", ms["advance"], ms["hand"], "ms", "ratio <= 1.5",
            f"`Canal.advance` ({what}; encrypted state, call journal) against a "
            f"hand-written LangGraph graph doing the same work; {how}"),
        row("graph_invoke_ms", ms["graph_invoke_ms"], ms["hand"], "ms", None,
            f"canal's compiled graph, `invoke` on the store's SQLite saver, against the "
            f"hand-written graph; {how}"),
        *(row(name, ms[name], ms["graph_invoke_ms"], "ms", None,
              f"{note} against canal's graph `invoke`; {how}")
          for name, note in INFORMATIONAL.items())]


if __name__ == "__main__":
    run_alone(measure)
