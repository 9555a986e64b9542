"""One step's front matter and body stub, from the creator's options.

``--field NAME:TYPE[:required]`` becomes a gate field; ``--map ARG=TEMPLATE`` an argument
of the tool (a value that parses as JSON is kept as JSON: ``priority=1`` is the integer 1,
``title="{{gate.ask.title}}"`` and ``title={{gate.ask.title}}`` are both that text).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from canal.errors import InvalidName, UsageError
from canal.spec.models import STEP_TYPES
from canal.spec.validate import STEP_ID

FIELD_TYPES = ("string", "integer", "number", "boolean", "array", "object")

BODIES = {
    "interactive": (
        "Replace this text with the instruction the agent follows at this step: what to ask "
        "the user, what each field means and what a good answer looks like. The agent "
        "submits the fields of the gate when the user has answered."),
    "automated": (
        "canal calls the tool with the arguments in automation.input_mapping; the agent sees "
        "this text only when the call fails. Replace it with what the call does and what a "
        "person should check before retrying or skipping it."),
    "notification": (
        "Replace this text with the message the agent shows the user. References to "
        "earlier steps (gate.<step>.<field>, result.<step>.<path>, written in double "
        "braces) are filled in before the agent sees it."),
}


def check_step_id(step_id: str) -> str:
    if not isinstance(step_id, str) or not STEP_ID.fullmatch(step_id):
        raise InvalidName(f"step id {step_id!r} is not valid: a step id is letters, digits, "
                          "'_' and '-', and does not start with '-'", name=step_id)
    return step_id


def check_type(kind: str) -> str:
    if kind not in STEP_TYPES:
        raise UsageError(f"unknown step type {kind!r} (known: {', '.join(STEP_TYPES)})")
    return kind


def parse_field(text: str) -> tuple[str, dict[str, Any]]:
    """``NAME:TYPE[:required]`` as a gate field."""
    parts = text.split(":")
    if len(parts) not in (2, 3) or (len(parts) == 3 and parts[2] != "required"):
        raise UsageError(f"--field {text!r}: expected NAME:TYPE or NAME:TYPE:required")
    name, kind = parts[0], parts[1]
    if not STEP_ID.fullmatch(name):
        raise UsageError(f"--field {text!r}: a field name is letters, digits, '_' and '-'")
    if kind not in FIELD_TYPES:
        raise UsageError(f"--field {text!r}: unknown type {kind!r} (known: "
                         f"{', '.join(FIELD_TYPES)})")
    field: dict[str, Any] = {"type": kind, "required": len(parts) == 3,
                             "desc": f"TODO: what {name} is"}
    return name, field


def parse_map(text: str) -> tuple[str, Any]:
    """``ARG=TEMPLATE`` as one tool argument; a value that parses as JSON stays JSON."""
    argument, equals, value = text.partition("=")
    if not equals or not argument:
        raise UsageError(f"--map {text!r}: expected ARG=VALUE, e.g. "
                         "title={{gate.ask.title}} or priority=1")
    try:
        parsed: Any = json.loads(value)
    except ValueError:
        parsed = value
    return argument, parsed


def step_front(kind: str, title: str | None, fields: Iterable[str], tool: str | None,
               mapping: Iterable[str] | Mapping[str, Any]) -> dict[str, Any]:
    """The front matter of a new step; UsageError for an option its type does not take."""
    check_type(kind)
    fields, pairs = list(fields), _pairs(mapping)
    if fields and kind != "interactive":
        raise UsageError(f"--field is for interactive steps, not {kind} ones")
    if tool is not None and kind != "automated":
        raise UsageError(f"--tool is for automated steps, not {kind} ones")
    if pairs and kind != "automated":
        raise UsageError(f"--map is for automated steps, not {kind} ones")
    if kind == "automated" and not tool:
        raise UsageError("an automated step needs --tool TOOL (the tool canal calls)")
    front: dict[str, Any] = {"type": kind}
    if title:
        front["title"] = title
    if fields:
        schema: dict[str, Any] = {}
        for text in fields:
            name, field = parse_field(text)
            if name in schema:
                raise UsageError(f"--field {name!r} is given twice")
            schema[name] = field
        front["gate"] = {"schema": schema}
    if kind == "automated":
        front["automation"] = {"tool": tool, "input_mapping": pairs}
    return front


def _pairs(mapping: Iterable[str] | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(mapping, Mapping):
        return dict(mapping)
    out: dict[str, Any] = {}
    for text in mapping:
        argument, value = parse_map(text)
        if argument in out:
            raise UsageError(f"--map {argument!r} is given twice")
        out[argument] = value
    return out
