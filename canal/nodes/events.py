"""Tool events: what a run streams as LangGraph custom events (``stream_mode="custom"``).

Every tool call a node sends (an automated step's call, a compensation) streams two events,
whatever client runs the graph (``stream``/``astream``, the facade's ``on_event``)::

    {"event": "tool", "phase": "started", "step": "create-project", "tool": "create_project",
     "started": "2026-01-01T12:00:00.000+00:00"}
    {"event": "tool", "phase": "finished", "step": "create-project", "tool": "create_project",
     "started": "...", "finished": "...", "duration": 0.412, "ok": true}

``duration`` is in seconds and covers starting the tool's server and every retry; ``ok`` is
false when the call failed (the step then parks as failed). A compensation's events carry
``"compensation": true``, a read-back's (``verify``) ``"verify": true``. An outcome
replayed from the call journal sends nothing and streams no event. With no one streaming
custom events, writing one does nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from canal.nodes.base import now


def _writer() -> Callable[[Any], None]:
    from langgraph.config import get_stream_writer

    try:
        return get_stream_writer()
    except RuntimeError:  # called outside a graph run: no one to stream to
        return lambda _event: None


class ToolEvents:
    """The events of one call of ``step`` (its compensation when ``compensation``):
    ``started`` is streamed when this is made, ``finished(ok)`` when the call ends."""

    def __init__(self, step: str, tool: str, compensation: bool = False,
                 verify: bool = False) -> None:
        self.base: dict[str, Any] = {"event": "tool", "step": step, "tool": tool}
        if compensation:
            self.base["compensation"] = True
        if verify:
            self.base["verify"] = True
        self.write = _writer()
        self.started, self._clock = now(), time.monotonic()
        self.write({**self.base, "phase": "started", "started": self.started})

    def finished(self, ok: bool) -> None:
        self.write({**self.base, "phase": "finished", "started": self.started,
                    "finished": now(), "duration": round(time.monotonic() - self._clock, 3),
                    "ok": ok})
