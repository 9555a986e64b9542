"""Async methods for canal's synchronous savers, so ``ainvoke``/``astream`` work on a graph
compiled with the store's checkpointer.

LangGraph's ``SqliteSaver`` and ``PostgresSaver`` raise ``NotImplementedError`` from their
async methods, and the async savers (``AsyncSqliteSaver`` over aiosqlite,
``AsyncPostgresSaver``) would need connections of their own beside the ones canal's tables,
locks and call journal share. So canal keeps one implementation: each async method runs its
synchronous twin in a worker thread (``asyncio.to_thread``), over the same connection and
lock, and the event loop never waits on the database. ``python -m bench --only runtime`` measures
what the thread hop costs against the synchronous path and against ``AsyncSqliteSaver``.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from functools import cache
from typing import Any


def _in_thread(name: str) -> Callable[..., Any]:
    async def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        return await asyncio.to_thread(getattr(self, name), *args, **kwargs)

    method.__name__ = f"a{name}"
    method.__doc__ = f"``{name}`` in a worker thread."
    return method


class ThreadedAsync:
    """Mixin for a synchronous ``BaseCheckpointSaver``: its async methods in a thread."""

    aget_tuple = _in_thread("get_tuple")
    aput = _in_thread("put")
    aput_writes = _in_thread("put_writes")
    adelete_thread = _in_thread("delete_thread")
    aget_delta_channel_history = _in_thread("get_delta_channel_history")

    async def alist(self, config: Any, *, filter: Any = None, before: Any = None,
                    limit: int | None = None) -> AsyncIterator[Any]:
        """``list`` read whole in a worker thread, then handed out one by one."""
        found = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before,  # type: ignore[attr-defined]
                                   limit=limit)))
        for item in found:
            yield item


@cache
def threaded(saver_class: type) -> type:
    """``saver_class`` with ``ThreadedAsync``'s async methods (one class per saver class)."""
    return type(saver_class.__name__, (ThreadedAsync, saver_class), {
        "__module__": __name__, "__doc__": saver_class.__doc__})
