"""Size limits on what canal accepts, so no input can exhaust memory or the stack.

Submitted data (gate data, ``canal call`` arguments) is limited in total size, string
length and nesting depth; defaults can be changed under ``limits:`` in ``canal.yaml``.
Workflow files are limited by the loader (``MAX_FILE_BYTES``, ``MAX_FRONT_MATTER_BYTES``),
and so is the text one step shows from its reference files (``MAX_STEP_REFERENCE_BYTES``):
all of it goes into one envelope and one interrupt, at every visit to the step.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from canal.errors import ConfigError, LimitExceeded, UsageError

MAX_FILE_BYTES = 1024 * 1024
MAX_FRONT_MATTER_BYTES = 64 * 1024
MAX_STEP_REFERENCE_BYTES = 256 * 1024  # the reference files of one step, together
MAX_LIMIT = 2**31 - 1  # any limit above this is no limit at all


@dataclass(frozen=True)
class Limits:
    data_bytes: int = 256 * 1024
    string_length: int = 64 * 1024
    depth: int = 32

    @classmethod
    def from_settings(cls, raw: Any, source: str = "canal.yaml") -> Limits:
        """The limits under ``limits:`` in ``source`` (None: the defaults), or ConfigError."""
        if raw is None:
            return cls()
        if not isinstance(raw, Mapping):
            raise ConfigError(f"{source}: limits must be a mapping of limit names to numbers "
                              "(data_bytes, string_length, depth)")
        unknown = sorted(str(k) for k in raw if k not in ("data_bytes", "string_length", "depth"))
        if unknown:
            raise ConfigError(f"{source}: limits: unknown key(s) {', '.join(unknown)} "
                              "(known: data_bytes, string_length, depth)")
        for key, value in raw.items():
            if isinstance(value, bool) or not isinstance(value, int) \
                    or not 1 <= value <= MAX_LIMIT:
                raise ConfigError(f"{source}: limits.{key} must be a whole number from 1 to "
                                  f"{MAX_LIMIT}")
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
    except ValueError as exc:  # the only other: an integer Python will not convert
        raise too_many_digits(source) from exc
    check(value, source, limits)
    return value


def too_many_digits(source: str) -> LimitExceeded:
    """The error for a number longer than Python converts (``sys.get_int_max_str_digits``)."""
    return LimitExceeded(f"{source} holds a number of more than "
                         f"{sys.get_int_max_str_digits()} digits")


def read_limited(path: str, source: str, limits: Limits) -> str:
    """The text of file ``path`` (``-``: standard input), of which no more than the limit
    (``limits.data_bytes``) and one byte is ever read: an endless input is refused, not
    read into memory."""
    most = limits.data_bytes + 1
    try:
        if path == "-":
            stdin = getattr(sys.stdin, "buffer", None)  # a text stream without one: a test's
            data = stdin.read(most) if stdin is not None else sys.stdin.read(most).encode(
                "utf-8", "surrogatepass")
        else:
            with open(path, "rb") as handle:
                data = handle.read(most)
    except OSError as exc:
        raise UsageError(f"{source}: cannot read {path}: {exc}") from exc
    if len(data) >= most:
        raise LimitExceeded(f"{source} is larger than {limits.data_bytes} bytes "
                            "(limits.data_bytes in canal.yaml)")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{source}: {path} is not UTF-8 text: {exc}") from exc


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
