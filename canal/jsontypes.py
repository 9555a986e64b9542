"""JSON types in canal's messages, and the outcome of checking submitted data.

Shared by gate checks (``canal.nodes.gate``) and tool-argument checks (``canal.tools.meta``),
which answer in the same shape.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Checked:
    """Data checked against declared fields: what passes, and everything that did not."""

    data: dict[str, Any] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)
    errors: list[dict[str, str]] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)

    @property
    def accepted(self) -> bool:
        return not self.missing and not self.errors


def blank(value: Any) -> bool:
    """Whether a required value counts as missing: absent, ``null``, or text that is empty
    or only whitespace (an empty name is no name; a gate field opts out with
    ``allow_empty``)."""
    return value is None or (isinstance(value, str) and not value.strip())


def json_type(value: Any) -> str:
    """``string``, ``integer``, ``number``, ``boolean``, ``array``, ``object`` or ``null``
    (a Python type name for anything JSON cannot hold)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return type(value).__name__


def fits(value: Any, expected: str) -> bool:
    """Whether ``value`` is of JSON type ``expected`` (an integer is also a number)."""
    kind = json_type(value)
    return kind == expected or (expected == "number" and kind == "integer")


INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def refuse_constant(constant: str) -> Any:
    """``json.loads(..., parse_constant=refuse_constant)``: ``NaN`` and ``Infinity`` are a
    ValueError, as they are for every strict JSON parser."""
    raise ValueError(f"{constant} is not JSON")


def unstorable(value: Any, path: str = "") -> tuple[str, str] | None:
    """The first place in ``value`` that no checkpointer can store as it is, as ``(path,
    why)`` (a path like ``admins[0].id``), or None.

    Such values are integers outside 64 bits (LangGraph's serializer refuses them, and every
    later command on the run would fail), lone UTF-16 surrogates (they would silently become
    ``?``) and numbers that are not finite. Anything that is not JSON data is left to other
    checks.
    """
    stack: list[tuple[str, Any]] = [(path, value)]
    while stack:
        where, item = stack.pop()
        why = _why_unstorable(item)
        if why is not None:
            return where, why
        if isinstance(item, Mapping):
            for key in item:
                why = _why_unstorable(key)
                if why is not None:
                    return where, why.replace("the text", "a key", 1)
            stack.extend((f"{where}.{k}" if where else str(k), v)
                         for k, v in reversed(list(item.items())))
        elif isinstance(item, (list, tuple)):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(item))))
    return None


def unstorable_error(name: Any, value: Any) -> dict[str, str] | None:
    """The error of submitted field ``name`` (in a ``Checked``) when it or its value is
    ``unstorable``, else None."""
    found = unstorable({name: value})
    if found is None:
        return None
    return {"field": str(name), "message": ": ".join(filter(None, found))}


def _why_unstorable(item: Any) -> str | None:
    if isinstance(item, bool):
        return None
    if isinstance(item, int) and not INT64_MIN <= item <= INT64_MAX:
        shown = f"the integer {item}" if item.bit_length() <= 128 \
            else f"an integer of {item.bit_length()} bits"
        return f"{shown} is outside the 64-bit range ({INT64_MIN} to {INT64_MAX})"
    if isinstance(item, float) and not math.isfinite(item):
        return f"the number {item} is not finite"
    if isinstance(item, str):
        try:
            item.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"the text holds a lone UTF-16 surrogate (\\u{ord(item[exc.start]):04x})"
    return None
