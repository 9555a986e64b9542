"""A failed step is one typed value, ``Failure``, with one table of messages.

Every way an automated step can stop short has a ``kind``. Recovery branches on the kind,
never on message text, and every message an agent reads about a failure or a crash comes
from the two tables below.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from canal.jsontypes import Checked

FailureKind = Literal["tool_error", "in_flight", "declined", "template", "postcondition",
                      "invalid_arguments"]

MESSAGES: dict[str, str] = {
    "tool_error": "{detail}",
    "template": "{detail}",
    "postcondition": "{detail}",
    "invalid_arguments": "{detail}",
    "in_flight": ("the call may or may not have happened (the process stopped during it); "
                  "retry, skip or abort"),
    "declined": "the call was not confirmed",
}

# Why a run whose process died during an automated step stands where it does, from what
# the call journal knows of the step's call.
STOPPED: dict[str, str] = {
    "not_sent": ("the run stopped before this step's call was sent; recover, or answer "
                 "retry, to send it"),
    "finished": ("the run stopped after this step's call finished, before its result was "
                 "saved; recover, or answer retry, to save it without calling again"),
    "safe": ("the run stopped during this step's call, which is safe to repeat; recover, or "
             "answer retry, to send it again"),
    "in_flight": ("the call may or may not have happened (the process stopped during it); "
                  "answer retry to send it again, skip or abort"),
    "verifying": ("the run stopped while reading back this step's call, which succeeded; "
                  "recover, or answer recheck, to read it back again"),
    "unknown": ("the run stopped while this step was running; the call may or may not have "
                "happened; recover, or answer retry, skip or abort"),
    "running": ("another process is running this step right now (it holds the run's lock): "
                "nothing has stopped; read current again when it is done, an answer before "
                "then is refused as a conflict"),
}


CODES: dict[str, str] = {"postcondition": "postcondition_failed"}


def argument_errors(check: Checked) -> list[dict[str, str]]:
    """A failed argument check as per-argument errors, ``{"field", "message"}``: missing
    required arguments first."""
    return [{"field": name, "message": "required, but missing or empty"}
            for name in check.missing] + list(check.errors)


def invalid_arguments(tool: str, errors: list[dict[str, str]]) -> str:
    """The message of arguments that do not fit ``tool``'s schema (``errors``, from
    ``argument_errors``): which arguments, and that the tool was not called."""
    listed = "; ".join(f"{e['field'] or 'the arguments'}: {e['message']}" for e in errors)
    return (f"the arguments for {tool} do not fit its input schema, so nothing was sent "
            f"({listed})")


@dataclass(frozen=True)
class Failure:
    """Why the automated step ``step`` stopped short on the call with ``key``; a
    ``postcondition`` failure lists its mismatches in ``errors`` (``{"path", "expected",
    "actual"}``) and names the read-back tool in ``tool``; an ``invalid_arguments`` one
    lists the arguments that do not fit the tool's schema (``{"field", "message"}``, as a
    gate rejection does) and sent nothing."""

    kind: FailureKind
    step: str
    tool: str
    key: str
    detail: str = ""
    errors: tuple[dict[str, Any], ...] = ()

    @property
    def code(self) -> str:
        return CODES.get(self.kind, self.kind)

    @property
    def message(self) -> str:
        return MESSAGES[self.kind].format(detail=self.detail)

    def to_state(self) -> dict[str, Any]:
        """The JSON-plain form kept in the run's state (and shown in ``errors``)."""
        state: dict[str, Any] = {"step": self.step, "tool": self.tool, "error": self.message,
                                 "key": self.key, "kind": self.kind}
        if self.kind in ("postcondition", "invalid_arguments"):
            state |= {"code": self.code, "errors": list(self.errors)}
        return state

    @classmethod
    def from_state(cls, data: Mapping[str, Any]) -> Failure:
        kind: FailureKind = data.get("kind")  # type: ignore[assignment]  # checked next
        if kind not in MESSAGES:  # saved before failures had a kind
            kind = "in_flight" if data.get("error") == MESSAGES["in_flight"] else "tool_error"
        detail = "" if kind in ("in_flight", "declined") else str(data.get("error", ""))
        return cls(kind, data["step"], data.get("tool") or "", data.get("key") or "", detail,
                   tuple(data.get("errors") or ()))

    @property
    def resend_same_key(self) -> bool:
        """``retry`` sends this same call again under its key (the backend may have it)."""
        return self.kind == "in_flight"
