"""Static checks of what a workflow hands its tools against what the tools declare.

A gate field that feeds a tool argument unchanged (the argument's mapping is exactly
``{{gate.<step>.<field>}}``) should enforce what the tool does. Otherwise a value the tool
refuses passes the gate, the person moves on, and only the call refuses it later (the run
parks with ``invalid_arguments``). Each such gap is a warning that says what to copy into
the gate: the tool's enum, or its type.

The tools' schemas come from a callable (in canal, the tool cache's, with the rules' ENUMs
merged in), so this module never imports the tools layer.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from canal.errors import Problem
from canal.spec.models import FieldSpec, StepSpec, WorkflowSpec
from canal.spec.templates import Reference, scan

SchemaOf = Callable[[str], "Mapping[str, Any] | None"]  # tool -> input schema (None: unknown)


def tool_problems(spec: WorkflowSpec, schema_of: SchemaOf) -> list[Problem]:
    """A warning for each gate field that feeds a tool argument without enforcing the
    argument's enum or type. Tools ``schema_of`` does not know are not checked."""
    out = []
    for step in spec.steps:
        for key, tool, mapping in _calls(step):
            schema = schema_of(tool)
            properties = (schema or {}).get("properties") or {}
            for argument, value in mapping.items():
                prop = properties.get(argument)
                found = gate_field(spec, value)
                if found is None or not isinstance(prop, Mapping):
                    continue
                name, field = found
                out += [Problem(step.path, message, key=f"{key}.{argument}", text=value,
                                warning=True)
                        for message in _gaps(tool, argument, prop, name, field)]
    return out


def _calls(step: StepSpec) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
    """Every call of ``step``: its key in the front matter, the tool, the input mapping."""
    for key, call in (("automation", step.automation), ("compensate", step.compensate),
                      ("verify", step.verify)):
        if call is not None:
            yield f"{key}.input_mapping", call.tool, call.input_mapping


def gate_field(spec: WorkflowSpec, value: Any) -> tuple[str, FieldSpec] | None:
    """The gate field ``value`` is exactly a reference to (its JSON value passes as it is),
    or None (text, a path into the field, or a reference the validator already refuses)."""
    if not isinstance(value, str):
        return None
    parts = list(scan(value))
    if len(parts) != 1 or not isinstance(parts[0], Reference) or value.strip() != parts[0].text:
        return None
    ref = parts[0]
    if ref.namespace != "gate" or len(ref.path) != 1:
        return None
    step = next((s for s in spec.steps if s.id == ref.step), None)
    field = step.gate.get(str(ref.path[0])) if step is not None else None
    return (str(ref.path[0]), field) if field is not None else None


def _gaps(tool: str, argument: str, prop: Mapping[str, Any], name: str,
          field: FieldSpec) -> list[str]:
    """What the tool's ``argument`` requires that gate field ``name`` does not enforce."""
    kind = prop.get("type")
    if isinstance(kind, str) and field.type != kind and not (
            kind == "number" and field.type == "integer"):
        if field.type == "number" and kind == "integer":  # wider: 1.5 passes the gate
            return [f"{tool} takes {argument} as {kind}, but gate field {name} is "
                    f"{field.type}: set type: {kind} on gate field {name}"]
        return []  # never fits: an error of canal.spec.tool_contract
    allowed = prop.get("enum")
    if not isinstance(allowed, list):
        return []
    shown = _shown(allowed)
    if field.enum is None:
        return [f"{tool} accepts only {shown} as {argument}, which the gate does not "
                f"enforce: add enum: {shown} to gate field {name}"]
    extra = [v for v in field.enum if v not in allowed]
    if extra:
        return [f"gate field {name} allows {_shown(extra)}, which "
                f"{tool} refuses as {argument}: keep its enum within {shown}"]
    return []


def _shown(values: list[Any]) -> str:
    """Values as the author writes them in YAML front matter (JSON is YAML)."""
    return json.dumps(values, ensure_ascii=False, allow_nan=False)
