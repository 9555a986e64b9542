"""Size limits on what canal accepts, so no input can exhaust memory or the stack.

Submitted data (gate data, ``canal call`` arguments) is limited in total size, string
length and nesting depth; defaults can be changed under ``limits:`` in ``canal.yaml``.
Workflow files are limited by the loader (``MAX_FILE_BYTES``, ``MAX_FRONT_MATTER_BYTES``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from canal.errors import LimitExceeded, UsageError

MAX_FILE_BYTES = 1024 * 1024
MAX_FRONT_MATTER_BYTES = 64 * 1024


@dataclass(frozen=True)
class Limits:
    data_bytes: int = 256 * 1024
    string_length: int = 64 * 1024
    depth: int = 32

    @classmethod
    def from_settings(cls, raw: Mapping[str, Any] | None) -> Limits:
        from canal.errors import ConfigError

        raw = dict(raw or {})
        unknown = sorted(set(raw) - {"data_bytes", "string_length", "depth"})
        if unknown:
            raise ConfigError(f"canal.yaml: limits: unknown key(s) {', '.join(unknown)} "
                              "(known: data_bytes, string_length, depth)")
        for key, value in raw.items():
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ConfigError(f"canal.yaml: limits.{key} must be a whole number above 0")
        return cls(**raw)


def parse_json(text: str, source: str, limits: Limits) -> Any:
    """``text`` as JSON, within the limits (checked on the text first, then the value)."""
    size = len(text.encode("utf-8", errors="replace"))
    if size > limits.data_bytes:
        raise LimitExceeded(f"{source} is {size} bytes; the limit is {limits.data_bytes} "
                            "(limits.data_bytes in canal.yaml)")
    try:
        value = json.loads(text)
    except RecursionError as exc:
        raise LimitExceeded(f"{source} is nested too deeply") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"{source} is not valid JSON: {exc}") from exc
    check(value, source, limits)
    return value


def check(value: Any, source: str, limits: Limits) -> None:
    """Raise LimitExceeded if ``value`` is too large, too deep or holds too long a string."""
    stack = [(value, 1)]
    seen = 0
    while stack:
        item, depth = stack.pop()
        if depth > limits.depth:
            raise LimitExceeded(f"{source} is nested more than {limits.depth} levels deep "
                                "(limits.depth in canal.yaml)")
        if isinstance(item, str):
            seen += len(item)
            if len(item) > limits.string_length:
                raise LimitExceeded(f"{source} holds a string of {len(item)} characters; the "
                                    f"limit is {limits.string_length} (limits.string_length)")
        elif isinstance(item, Mapping):
            seen += len(item)
            stack.extend((k, depth + 1) for k in item)
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, (list, tuple)):
            seen += len(item)
            stack.extend((v, depth + 1) for v in item)
        if seen > limits.data_bytes:
            raise LimitExceeded(f"{source} is larger than {limits.data_bytes} bytes "
                                "(limits.data_bytes in canal.yaml)")


def json_plain_data(data: Any) -> Any:
    """Submitted data as JSON-plain values (what every checkpointer stores), or UsageError."""
    try:
        return json.loads(json.dumps(data, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"the submitted data is not JSON data: {exc}") from exc
