"""What a call is, importable without LangGraph (read-only commands need it): its key, and
whether sending it twice is harmless."""

from __future__ import annotations

from canal.tools.client import ToolClient


def call_key(thread_id: str, step_id: str, attempt: int) -> str:
    """The key of one tool call: stable across a crash and a resend, new for each ``retry``
    answered to a failed call."""
    return f"{thread_id}:{step_id}:{attempt}"


def safe_to_repeat(tool: str, idempotent: bool, tools: ToolClient) -> bool:
    """Whether sending a call of ``tool`` twice is harmless: the step declares it
    (``automation.idempotent``), or the tool's annotations do."""
    return idempotent or tools.safe_to_repeat(tool)
