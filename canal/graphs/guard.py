"""The compiled graph's door: input that no checkpointer can hold is refused before
LangGraph stores any of it.

LangGraph writes a graph's input and a ``Command(resume=...)`` value to the checkpointer
before any node runs, so a node's gate check comes too late for a value its serializer
cannot write (an integer outside 64 bits): the write would fail, and every later command on
the run with it. The same goes for ``update_state``. Such input raises ``UsageError`` naming
the place and why (``canal.jsontypes.unstorable``); nothing is stored.
"""

from __future__ import annotations

from typing import Any

from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from canal.errors import UsageError
from canal.jsontypes import unstorable


def refuse_unstorable(value: Any) -> None:
    """UsageError if ``value`` (a graph input, a ``Command`` or state values) holds
    anything no checkpointer can store."""
    if isinstance(value, Command):
        value = {"resume": value.resume, "update": value.update}
    found = unstorable(value)
    if found is not None:
        raise UsageError(f"the graph input cannot be stored: {found[0] or 'input'}: "
                         f"{found[1]}; nothing was changed")


class GuardedGraph(CompiledStateGraph):
    """A compiled graph that checks every input (``invoke``, ``stream`` and their async
    forms all pass through ``stream``/``astream``) and every state update."""

    def stream(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        refuse_unstorable(input)
        return super().stream(input, config, **kwargs)

    def astream(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        refuse_unstorable(input)
        return super().astream(input, config, **kwargs)

    def bulk_update_state(self, config: Any, supersteps: Any) -> Any:
        for superstep in supersteps:
            for update in superstep:
                refuse_unstorable(update.values)
        return super().bulk_update_state(config, supersteps)

    async def abulk_update_state(self, config: Any, supersteps: Any) -> Any:
        for superstep in supersteps:
            for update in superstep:
                refuse_unstorable(update.values)
        return await super().abulk_update_state(config, supersteps)


def guarded(graph: CompiledStateGraph) -> GuardedGraph:
    """``graph`` with the door (the same object: only its class changes, so copies made by
    ``with_config`` keep it)."""
    graph.__class__ = GuardedGraph
    return graph  # type: ignore[return-value]
