"""Asking the person through an MCP elicitation form (DESIGN.md §9).

When the client declares the elicitation capability, ``start``, or ``advance`` without
``gate_data``, at an interactive step whose gate holds only flat primitive fields shows
that gate as a form. An accepted answer goes through the same gate as any ``advance`` (a
rejection comes back as the rejected envelope); a declined or cancelled form leaves the run
where it was, and the answer is the envelope at that step (``awaiting_input``). A step
with a sensitive field is never asked this way: MCP forms are not for secrets.
"""

from __future__ import annotations

from typing import Any

PRIMITIVE = {"string", "integer", "number", "boolean"}


def form_schema(envelope: dict[str, Any]) -> dict[str, Any] | None:
    """The elicitation schema of the envelope's step, or None when that step cannot be a
    form: not an interactive step awaiting input, a confirmation, no fields, a field that
    is not a flat primitive (or whose enum is not of strings), or a sensitive field."""
    step = envelope.get("step") or {}
    gate = step.get("gate") or {}
    if (envelope.get("status") != "awaiting_input" or step.get("type") != "interactive"
            or step.get("call") is not None or not gate):
        return None
    properties: dict[str, Any] = {}
    for name, field in gate.items():
        kind, enum = field.get("type"), field.get("enum")
        if kind not in PRIMITIVE or field.get("sensitive"):
            return None
        if enum is not None and (kind != "string" or not all(isinstance(v, str) for v in enum)):
            return None
        prop: dict[str, Any] = {"type": kind}
        if field.get("desc"):
            prop["description"] = field["desc"]
        if enum is not None:
            prop["enum"] = list(enum)
        for key, target in (("min", "minimum"), ("max", "maximum")):
            if field.get(key) is not None and kind in ("integer", "number"):
                prop[target] = field[key]
        if "default" in field:
            prop["default"] = field["default"]
        properties[name] = prop
    required = [name for name, field in gate.items() if field.get("required")]
    return {"type": "object", "properties": properties, "required": required}


def form_message(envelope: dict[str, Any]) -> str:
    step = envelope["step"]
    return str(step.get("instructions") or step.get("title") or step["id"])
