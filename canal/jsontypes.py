"""The JSON type names canal uses in messages and checks, for any Python value."""

from __future__ import annotations

from typing import Any, Mapping


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
