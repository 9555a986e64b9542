"""JSON types in canal's messages, and the outcome of checking submitted data.

Shared by gate checks (``canal.nodes.gate``) and tool-argument checks (``canal.tools.meta``),
which answer in the same shape.
"""

from __future__ import annotations

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
