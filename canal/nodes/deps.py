"""What nodes need from outside the graph, typed: the tool client, the call journal, the
run registry and the field sealer.

``Canal.compile`` builds one ``Deps`` and the graph's nodes close over it, so a compiled
graph works wherever it runs (invoked directly, nested in a parent graph, served by
LangGraph Server) with no run context to pass in.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from canal.errors import ConfigError
from canal.nodes.sensitive import TextSealer
from canal.tools.client import ToolClient


class CallJournal(Protocol):
    def call_started(self, thread_id: str, key: str, step: str, digest: str) -> None: ...

    def call_finished(self, thread_id: str, key: str, outcome: dict[str, Any]) -> None: ...

    def call_record(self, thread_id: str, key: str) -> dict[str, Any] | None: ...


class Registry(Protocol):
    def register(self, thread_id: str, workflow: str, created_at: str) -> bool: ...


@dataclass(frozen=True)
class Deps:
    tools: ToolClient
    journal: CallJournal
    registry: Registry
    sealer: TextSealer
    sleep: Callable[[float], None] = field(default=time.sleep)

    def __post_init__(self) -> None:
        for name in ("tools", "journal", "registry", "sealer"):
            if getattr(self, name) is None:
                raise ConfigError(f"a canal graph needs its {name}; compile it with "
                                  "Canal(...).compile(workflow)")


def thread_id() -> str:
    """The run's thread id, from the config LangGraph passes to the running node."""
    from langgraph.config import get_config

    found = (get_config().get("configurable") or {}).get("thread_id")
    if not found:
        raise ConfigError("a canal graph runs on a thread: pass "
                          "config={'configurable': {'thread_id': ...}}")
    return str(found)
