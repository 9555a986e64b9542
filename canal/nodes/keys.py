"""Call keys, importable without LangGraph (read-only commands need them)."""


def call_key(thread_id: str, step_id: str, attempt: int) -> str:
    """The key of one tool call: stable across a crash and a resend, new for each ``retry``
    answered to a failed call."""
    return f"{thread_id}:{step_id}:{attempt}"
