"""Masking of sensitive gate values in everything canal shows.

A gate field marked ``sensitive: true`` keeps its real value inside canal (templates and
tools receive it; at rest it is encrypted like all state), but every document canal prints
or returns (envelopes, ``current``, ``history``, errors inside them) shows ``MASK`` instead:
any value equal to a secret is replaced, and any text containing a secret of four or more
characters has it masked (shorter secrets are masked only where they stand alone, so a PIN
of ``7`` does not blank every digit).
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from canal.spec.models import WorkflowSpec

MASK = "********"
_MIN_SUBSTRING = 4


def secrets_of(spec: WorkflowSpec, values: Mapping[str, Any]) -> list[Any]:
    """The values of every sensitive field the run holds."""
    gate = values.get("gate") or {}
    found = []
    for step in spec.steps:
        for name, field in step.gate.items():
            value = (gate.get(step.id) or {}).get(name)
            if field.sensitive and value not in (None, ""):
                found.append(value)
    return found


def redact(document: Any, secrets: list[Any]) -> Any:
    """``document`` with every secret masked (a new object; the input is not changed)."""
    if not secrets:
        return document
    texts = sorted({s if isinstance(s, str) else json.dumps(s) for s in secrets},
                   key=len, reverse=True)
    long_texts = [t for t in texts if len(t) >= _MIN_SUBSTRING]

    def walk(value: Any) -> Any:
        if any(value == s and type(value) is type(s) for s in secrets):
            return MASK
        if isinstance(value, str):
            for text in long_texts:
                value = value.replace(text, MASK)
            return value
        if isinstance(value, Mapping):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [walk(v) for v in value]
        return value

    return walk(document)
