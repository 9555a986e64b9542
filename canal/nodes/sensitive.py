"""Sensitive gate fields: sealed inside the state, masked in everything canal shows.

A field marked ``sensitive: true`` is stored in the run's state as a *sealed token*, the
string ``canal:sealed:<cipher text>``: its JSON value encrypted with canal's key. So no
checkpointer, whoever owns it (canal's own store, a saver object, a parent graph's or
LangGraph Server's), and no client reading the state ever holds the value in clear. Only
templates open tokens, to build a tool call's arguments.

Everything canal prints or returns shows ``MASK`` instead of a secret: a token, a value
equal to a secret, and a secret of four or more characters inside a text (shorter secrets
are masked only where they stand alone, so a PIN of ``7`` does not blank every digit).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Protocol

from canal.spec.models import FieldSpec, WorkflowSpec

MASK = "********"
PREFIX = "canal:sealed:"
_TOKEN = re.compile(re.escape(PREFIX) + r"[A-Za-z0-9+/=:_-]+")
_MIN_SUBSTRING = 4


class TextSealer(Protocol):
    """What sealing needs of ``canal.crypto.Sealer``."""

    def seal_text(self, text: str) -> str: ...

    def open_text(self, sealed: str) -> str: ...


def is_sealed(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(PREFIX)


def seal_fields(gate: Mapping[str, FieldSpec], data: Mapping[str, Any],
                sealer: TextSealer) -> dict[str, Any]:
    """``data`` with every sensitive field's value sealed (already sealed ones kept)."""
    out = dict(data)
    for name, field in gate.items():
        value = out.get(name)
        if field.sensitive and value is not None and not is_sealed(value):
            out[name] = PREFIX + sealer.seal_text(json.dumps(value, allow_nan=False))
    return out


def open_value(value: Any, sealer: TextSealer) -> Any:
    """``value`` with every sealed token inside it opened (a new object)."""
    if is_sealed(value):
        return json.loads(sealer.open_text(value[len(PREFIX):]))
    if isinstance(value, Mapping):
        return {k: open_value(v, sealer) for k, v in value.items()}
    if isinstance(value, list):
        return [open_value(v, sealer) for v in value]
    return value


def open_gate(gate: Mapping[str, Any], sealer: TextSealer | None) -> dict[str, Any]:
    """A run's accepted gate data with its sealed values opened (for templates)."""
    if sealer is None:
        return dict(gate)
    return {step: open_value(data, sealer) for step, data in gate.items()}


def secrets_of(spec: WorkflowSpec, values: Mapping[str, Any],
               sealer: TextSealer | None = None) -> list[Any]:
    """The values of every sensitive field the run holds (opened when sealed)."""
    gate = values.get("gate") or {}
    found = []
    for step in spec.steps:
        for name, field in step.gate.items():
            value = (gate.get(step.id) or {}).get(name)
            if not field.sensitive or value in (None, ""):
                continue
            if is_sealed(value) and sealer is not None:
                value = open_value(value, sealer)
            if not is_sealed(value):
                found.append(value)
    return found


def redact(document: Any, secrets: list[Any]) -> Any:
    """``document`` with every sealed token and every secret masked (a new object)."""
    texts = sorted({s if isinstance(s, str) else json.dumps(s, allow_nan=False) for s in secrets},
                   key=len, reverse=True)
    long_texts = [t for t in texts if len(t) >= _MIN_SUBSTRING]

    def walk(value: Any) -> Any:
        if any(value == s and type(value) is type(s) for s in secrets):
            return MASK
        if isinstance(value, str):
            value = _TOKEN.sub(MASK, value) if PREFIX in value else value
            for text in long_texts:
                value = value.replace(text, MASK)
            return value
        if isinstance(value, Mapping):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        return value

    return walk(document)
