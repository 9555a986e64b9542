"""Gate checks: does submitted data complete a step?

Rules, in order (DESIGN.md §3): the submission must be a JSON object; undeclared fields
are dropped and reported; a value no checkpointer can hold (``jsontypes.unstorable``) is an
error, dropped or not; ``null`` counts as absent; required fields that are absent are
listed as missing, and so is a required string that is empty or only whitespace (an agent
that sends ``""`` has not collected the value) unless the field says ``allow_empty``;
present fields are checked for type, enum, pattern (a search bounded in time,
``canal.spec.patterns``) and bounds; optional absent fields with a default receive it. Any
missing field or error rejects the whole submission, and a rejection never reaches the
graph.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from canal.jsontypes import Checked, blank, fits, json_type, unstorable_error
from canal.spec.models import FieldSpec
from canal.spec.patterns import PATTERN_SECONDS, PatternTimeout, pattern_found

EDIT_STEP = FieldSpec(
    type="string",
    description=("with edit: the interactive step to answer again (default: the latest one "
                 "whose data this step's call uses)"),
)

ACTION_GATE: dict[str, FieldSpec] = {
    "action": FieldSpec(
        type="string", required=True, enum=("retry", "skip", "abort", "edit"),
        description=("retry the failed call, skip the step (its result stays empty), abort "
                     "the run, or edit: go back to the interactive step that supplied the "
                     "data and answer it again"),
    ),
    "step": EDIT_STEP,
}

VERIFY_ACTION_GATE: dict[str, FieldSpec] = {
    "action": FieldSpec(
        type="string", required=True, enum=("recheck", "retry", "skip", "abort", "edit"),
        description=("recheck reads the result back again without calling the tool, retry "
                     "calls the tool again, skip moves on (the result stays as the call gave "
                     "it), abort stops the run, edit goes back to the interactive step that "
                     "supplied the data (only while nothing after it changed anything)"),
    ),
    "step": EDIT_STEP,
}

CONFIRM_GATE: dict[str, FieldSpec] = {
    "confirm": FieldSpec(type="boolean", required=True,
                         description=("true to make the call shown in 'call', false to stop "
                                      "before it")),
}


def check_gate(schema: Mapping[str, FieldSpec], submitted: Any) -> Checked:
    """Check ``submitted`` against ``schema``; never raises for any JSON value."""
    check = Checked()
    if not isinstance(submitted, Mapping):
        kind = json_type(submitted)
        check.errors.append({"field": "", "message": f"expected a JSON object, got {kind}"})
        return check
    for name in submitted:
        if name not in schema:
            check.dropped.append(str(name))
            error = unstorable_error(name, submitted[name])  # the graph stores input as sent
            if error:
                check.errors.append(error)
    for name, spec in schema.items():
        value = submitted.get(name)
        if spec.required and not spec.allow_empty and spec.type == "string" and blank(value):
            check.missing.append(name)
            continue
        if value is None:
            if spec.required:
                check.missing.append(name)
            elif spec.default is not None:
                check.data[name] = copy.deepcopy(spec.default)  # never share the spec's object
            continue
        error = unstorable_error(name, value)  # no checkpointer could hold it
        message = error["message"] if error else field_error(spec, value)
        if message:
            check.errors.append({"field": name, "message": message})
        else:
            check.data[name] = value
    return check


def field_error(spec: FieldSpec, value: Any) -> str | None:
    """Why ``value`` does not fit ``spec``, or None when it does."""
    if not fits(value, spec.type):
        return f"expected {spec.type}, got {json_type(value)}"
    if spec.enum is not None and value not in spec.enum:
        return f"must be one of: {', '.join(map(_show, spec.enum))}"
    if spec.pattern is not None and isinstance(value, str):
        try:
            if not pattern_found(spec.pattern, value):
                return pattern_message(spec)
        except PatternTimeout:
            return (f"the pattern {spec.pattern} took more than {PATTERN_SECONDS:g} s to check "
                    "this value; send a shorter or simpler value")
    size, unit = _measure(value)
    if spec.min is not None and size < spec.min:
        return f"must be at least {_show(spec.min)}{unit}"
    if spec.max is not None and size > spec.max:
        return f"must be at most {_show(spec.max)}{unit}"
    return None


def pattern_message(spec: FieldSpec) -> str:
    """What a value that does not match ``spec.pattern`` is told, agent and person alike:
    the field's description and an example lead, the regular expression comes last. The
    example is the field's ``example``, else its ``default``; a sensitive field's default
    is never shown (it may be a real secret), and neither is the rejected value."""
    example = spec.example
    if example is None and not spec.sensitive:
        example = spec.default
    hint = f"e.g. {example}; " if isinstance(example, str) else ""
    rule = f"{hint}must match {spec.pattern}"
    return f"{spec.desc}: {rule}" if spec.desc else rule


def _measure(value: Any) -> tuple[float, str]:
    if isinstance(value, str):
        return len(value), " characters"
    if isinstance(value, (list, tuple)):
        return len(value), " items"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value, ""
    return 0, ""


def _show(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def json_schema(schema: Mapping[str, FieldSpec]) -> dict[str, Any]:
    """The gate as JSON Schema: what an interrupt's ``response_schema`` carries."""
    properties: dict[str, Any] = {}
    for name, spec in schema.items():
        prop: dict[str, Any] = {"type": spec.type}
        if spec.desc:
            prop["description"] = spec.desc
        if spec.enum is not None:
            prop["enum"] = list(spec.enum)
        if spec.pattern is not None:
            prop["pattern"] = spec.pattern
        if spec.default is not None and not spec.sensitive:  # a secret's default is secret
            prop["default"] = spec.default
        if spec.example is not None:
            prop["examples"] = [spec.example]
        bounds = {"string": ("minLength", "maxLength"), "array": ("minItems", "maxItems")}
        low, high = bounds.get(spec.type, ("minimum", "maximum"))
        if spec.min is not None:
            prop[low] = spec.min
        if spec.max is not None:
            prop[high] = spec.max
        if spec.sensitive:
            prop["writeOnly"] = True
        properties[name] = prop
    return {"type": "object", "properties": properties,
            "required": [n for n, s in schema.items() if s.required]}
