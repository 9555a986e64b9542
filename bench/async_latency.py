"""Async against sync: ``advance`` latency for a gate + two chained tool calls on SQLite.

canal has one implementation of a run: the nodes are synchronous, LangGraph runs them in a
worker thread under ``ainvoke``/``astream``, and the store's SQLite saver gets its async
methods by running the synchronous ones in a thread (``canal.checkpoints.threaded``). This
measures what that design costs, side by side in one run:

1. the facade: ``Canal.advance``, ``Canal.advance`` with an ``on_event`` listener (the
   graph streams custom events), and ``Canal.aadvance`` (``advance`` in a worker thread);
2. the compiled graph: ``invoke`` and ``ainvoke`` on the store's saver, and ``ainvoke`` on
   LangGraph's own ``AsyncSqliteSaver`` (aiosqlite) for comparison.

Usage: ``.venv/bin/python bench/async_latency.py [--runs N]``. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.runtime import make, median_ms, role, workflow_dir  # noqa: E402

ANSWER = {"name": "n", "host": "h"}


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


def graph_sync(workdir: Path, runs: int) -> list[float]:
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    with workflow_dir() as workdir:
        rows = [
            ("`Canal.advance` (sync)", facade(workdir, args.runs, "sync")),
            ("`Canal.advance` with an `on_event` listener", facade(workdir, args.runs,
                                                                   "events")),
            ("`await Canal.aadvance` (advance in a worker thread)",
             facade(workdir, args.runs, "async")),
            ("graph `invoke`, the store's SQLite saver", graph_sync(workdir, args.runs)),
            ("graph `ainvoke`, the store's SQLite saver (async methods in threads)",
             graph_async(workdir, args.runs, aiosqlite_saver=False)),
            ("graph `ainvoke`, LangGraph's `AsyncSqliteSaver` (aiosqlite)",
             graph_async(workdir, args.runs, aiosqlite_saver=True)),
        ]
    print("| advance: gate + 2 chained tools, SQLite, sync durability | median ms |")
    print("|---|---|")
    for name, samples in rows:
        print(f"| {name} | {median_ms(samples)} |")


if __name__ == "__main__":
    main()
