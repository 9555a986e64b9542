"""The compiled graph's door: input that no checkpointer can hold is refused before
LangGraph stores any of it.

LangGraph writes a graph's input and a ``Command(resume=...)`` value to the checkpointer
before any node runs, so a node's gate check comes too late for a value its serializer
cannot write (an integer outside 64 bits): the write would fail, and every later command on
the run with it. The same goes for ``update_state``. Such input raises ``UsageError`` naming
the place and why (``canal.jsontypes.unstorable``); nothing is stored. An input that
forges a node's write to ``gate`` (``$accepted``) is refused the same way.

It also keeps the ``updates`` stream to one entry per step: a node that wrote nothing (the
confirmation node of an automated step that needs none) yields no entry (``_visible``).
"""

from __future__ import annotations

from collections.abc import Callable
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
        visible = self._door(input, kwargs)
        return (chunk for chunk in super().stream(input, config, **kwargs) if visible(chunk))

    def astream(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        visible = self._door(input, kwargs)
        return (chunk async for chunk in super().astream(input, config, **kwargs)
                if visible(chunk))

    def bulk_update_state(self, config: Any, supersteps: Any) -> Any:
        _refuse_updates(supersteps)
        return super().bulk_update_state(config, supersteps)

    async def abulk_update_state(self, config: Any, supersteps: Any) -> Any:
        _refuse_updates(supersteps)
        return await super().abulk_update_state(config, supersteps)

    def _door(self, input: Any, kwargs: dict[str, Any]) -> Callable[[Any], bool]:
        """Refuse ``input`` if it cannot be stored or forges a node's write; which chunks of
        the stream to show."""
        refuse_unstorable(input)
        refuse_forged(input)
        return _visible(kwargs.get("stream_mode") or self.stream_mode,
                        kwargs.get("subgraphs", False), kwargs.get("version", "v1"))


def refuse_forged(value: Any) -> None:
    """UsageError if a graph input's ``gate`` holds one of canal's own markers (``$...``):
    only nodes write accepted data (``canal.graphs.state.merge_gate``); a client's gate
    input is a pre-answer, which the step checks."""
    gate = value.get("gate") if isinstance(value, dict) else None
    if isinstance(gate, dict) and any(str(key).startswith("$") for key in gate):
        raise UsageError("the graph input's gate maps step ids to pre-answers; a key that "
                         "starts with '$' is canal's own; nothing was changed")


def _refuse_updates(supersteps: Any) -> None:
    for superstep in supersteps:
        for update in superstep:
            refuse_unstorable(update.values)


def _visible(mode: Any, subgraphs: bool, version: str) -> Callable[[Any], bool]:
    """Whether a streamed chunk is shown: every chunk but an ``updates`` entry of nodes that
    wrote nothing (an automated step's confirmation node passing straight through), so the
    ``updates`` stream has one entry per step that changed the run. ``chunk`` has the shape
    LangGraph gives for ``mode``, ``subgraphs`` and ``version``."""

    def visible(chunk: Any) -> bool:
        if version == "v2":
            kind, payload = chunk.get("type"), chunk.get("data")
        elif isinstance(mode, list):
            kind, payload = chunk[-2], chunk[-1]
        else:
            kind, payload = mode, (chunk[-1] if subgraphs else chunk)
        return not (kind == "updates" and isinstance(payload, dict) and payload
                    and all(value is None for value in payload.values()))

    return visible


def guarded(graph: CompiledStateGraph) -> GuardedGraph:
    """``graph`` with the door (the same object: only its class changes, so copies made by
    ``with_config`` keep it)."""
    graph.__class__ = GuardedGraph
    return graph  # type: ignore[return-value]
