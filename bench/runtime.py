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
import operator
import sqlite3
import tempfile
import time
from collections.abc import Callable, Iterator
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


def facade(workdir: Path, runs: int, mode: str) -> list[float]:
    """``advance`` through the facade: ``sync``, ``events`` (with a listener) or ``async``
    (``aadvance``, every sample in one event loop)."""
    canal = new_canal(workdir, f"facade-{mode}")
    if mode == "events":
        canal.on_event = lambda event: None

    async def timed_async(thread: str) -> tuple[float, Any]:
        t = time.perf_counter()
        env = await canal.aadvance(thread, ANSWER)
        return time.perf_counter() - t, env

    def timed(thread: str) -> tuple[float, Any]:
        t = time.perf_counter()
        env = canal.advance(thread, ANSWER)
        return time.perf_counter() - t, env

    async def all_async() -> list[tuple[float, Any]]:
        return [await timed_async(canal.start("flow", thread_id=f"{mode}-{i}").thread_id)
                for i in range(runs)]

    if mode == "async":
        timings = asyncio.run(all_async())
    else:
        timings = [timed(canal.start("flow", thread_id=f"{mode}-{i}").thread_id)
                   for i in range(runs)]
    canal.close()
    assert all(env.step.id == "done" for _, env in timings)
    return [elapsed for elapsed, _ in timings]


def hand_written(workdir: Path, runs: int) -> list[float]:
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
        graph.invoke(Command(resume=ANSWER), config, durability="sync")
        samples.append(time.perf_counter() - t)
    conn.close()
    return samples


def graph_sync(workdir: Path, runs: int) -> list[float]:
    """canal's compiled graph, ``invoke`` on the store's SQLite saver."""
    from langgraph.types import Command

    canal = new_canal(workdir, "graph-sync")
    graph = canal.compile("flow")
    samples = []
    for i in range(runs):
        config = {"configurable": {"thread_id": f"g-{i}"}}
        graph.invoke({}, config)
        t = time.perf_counter()
        out = graph.invoke(Command(resume=ANSWER), config)
        samples.append(time.perf_counter() - t)
        assert out["__interrupt__"][0].value["step"]["id"] == "done"
    canal.close()
    return samples


def graph_async(workdir: Path, runs: int, aiosqlite_saver: bool) -> list[float]:
    """``ainvoke`` on the store's saver, or on an ``AsyncSqliteSaver`` of its own file."""
    from langgraph.types import Command

    canal = new_canal(workdir, f"graph-async-{aiosqlite_saver}")

    async def run() -> list[float]:
        if aiosqlite_saver:
            import aiosqlite
            from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

            conn = await aiosqlite.connect(workdir / "aio.db")
            graph = canal.compile("flow", checkpointer=AsyncSqliteSaver(conn))
        else:
            conn, graph = None, canal.compile("flow")
        samples = []
        for i in range(runs):
            config = {"configurable": {"thread_id": f"a-{i}"}}
            await graph.ainvoke({}, config)
            t = time.perf_counter()
            out = await graph.ainvoke(Command(resume=ANSWER), config)
            samples.append(time.perf_counter() - t)
            assert out["__interrupt__"][0].value["step"]["id"] == "done"
        if conn is not None:
            await conn.close()
        return samples

    samples = asyncio.run(run())
    canal.close()
    return samples


INFORMATIONAL: list[tuple[str, str, Callable[[Path, int], list[float]]]] = [
    ("advance_events_ms", "`Canal.advance` with an `on_event` listener",
     lambda w, n: facade(w, n, "events")),
    ("aadvance_ms", "`await Canal.aadvance` (advance in a worker thread)",
     lambda w, n: facade(w, n, "async")),
    ("graph_ainvoke_ms", "canal's graph, `ainvoke` on the store's SQLite saver (async "
     "methods in threads)", lambda w, n: graph_async(w, n, aiosqlite_saver=False)),
    ("graph_ainvoke_aiosqlite_ms", "canal's graph, `ainvoke` on LangGraph's "
     "`AsyncSqliteSaver` (aiosqlite)", lambda w, n: graph_async(w, n, aiosqlite_saver=True)),
]


def measure(quick: bool) -> list[dict[str, Any]]:
    runs = 10 if quick else 30
    what = "gate + 2 chained tools, SQLite, sync durability"
    with workflow_dir() as workdir:
        ours = median_ms(facade(workdir, runs, "sync"))
        hand = median_ms(hand_written(workdir, runs))
        invoke = median_ms(graph_sync(workdir, runs))
        figures = [
            row("advance_overhead_ratio", ours, hand, "ms", "ratio <= 1.5",
                f"`Canal.advance` ({what}; encrypted state, call journal) against a "
                f"hand-written LangGraph graph doing the same work; medians of {runs}"),
            row("graph_invoke_ms", invoke, hand, "ms", None,
                f"canal's compiled graph, `invoke` on the store's SQLite saver, against the "
                f"hand-written graph; medians of {runs}")]
        figures += [row(name, median_ms(run(workdir, runs)), invoke, "ms", None,
                        f"{note} against canal's graph `invoke`; medians of {runs}")
                    for name, note, run in INFORMATIONAL]
    return figures


if __name__ == "__main__":
    run_alone(measure)
