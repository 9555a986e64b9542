"""Sensitive gate fields: sealed inside the state, masked in everything canal shows.

A field marked ``sensitive: true`` is stored in the run's state sealed: every leaf of its
value (the value itself, or each string, number and boolean inside a sensitive list or
object) becomes a *sealed token*, the string ``canal:sealed:<cipher text>`` holding the
leaf's JSON value encrypted with canal's key. Keys and list lengths stay visible, so a
reference into the value (``{{gate.s.creds.password}}``, ``{{gate.s.codes[0]}}``) resolves
to the token of that part. No checkpointer, whoever owns it (canal's own store, a saver
object, a parent graph's or LangGraph Server's), and no client reading the state ever
holds the value in clear. Only templates open tokens, to build a tool call's arguments.

What canal shows instead of a secret is decided in ``canal.nodes.masking``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Protocol

from canal.nodes.masking import MASK, PREFIX, Masker, is_sealed, leaves
from canal.spec.models import FieldSpec, WorkflowSpec

__all__ = ["MASK", "TextSealer", "is_sealed", "masker_of", "open_gate", "open_value",
           "seal_fields", "secrets_of"]


class TextSealer(Protocol):
    """What sealing needs of ``canal.crypto.Sealer``."""

    def seal_text(self, text: str) -> str: ...

    def open_text(self, sealed: str) -> str: ...

    def digest_text(self, text: str) -> str:
        """A keyed digest: equal for equal texts, not computable without the key."""
        ...


def seal_fields(gate: Mapping[str, FieldSpec], data: Mapping[str, Any],
                sealer: TextSealer) -> dict[str, Any]:
    """``data`` with every leaf of every sensitive field's value sealed (already sealed
    leaves kept)."""
    out = dict(data)
    for name, field in gate.items():
        if field.sensitive and out.get(name) is not None:
            out[name] = _seal(out[name], sealer)
    return out


def _seal(value: Any, sealer: TextSealer) -> Any:
    if isinstance(value, Mapping):
        return {k: _seal(v, sealer) for k, v in value.items()}
    if isinstance(value, list):
        return [_seal(v, sealer) for v in value]
    if value is None or is_sealed(value):
        return value
    return PREFIX + sealer.seal_text(json.dumps(value, allow_nan=False))


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
    """The values of every sensitive field the run holds (opened; without a sealer, only
    the ones that were never sealed)."""
    gate = values.get("gate") or {}
    found = []
    for step in spec.steps:
        for name, field in step.gate.items():
            value = (gate.get(step.id) or {}).get(name)
            if not field.sensitive or value in (None, ""):
                continue
            if sealer is not None:
                found.append(open_value(value, sealer))
            elif not any(is_sealed(leaf) for leaf in leaves(value)):
                found.append(value)
    return found


def masker_of(spec: WorkflowSpec, values: Mapping[str, Any],
              sealer: TextSealer | None) -> Masker:
    """The masker of a run: its secrets, and its names (workflow, step ids, tools)."""
    names = [spec.name]
    for step in spec.steps:
        names.append(step.id)
        names += [part.tool for part in (step.automation, step.compensate) if part]
    return Masker.of(secrets_of(spec, values, sealer), names)
