"""A tool's fields as an agent should see them, and the check of a call's arguments.

Rules are applied here: ``IGNORE`` hides a field and drops it from arguments (a required
field is never hidden), ``ENUM`` lists the allowed values, ``NOTE`` lines travel with the
metadata. Arguments are checked before anything is sent: missing required fields, fields
the tool does not declare or that are ignored (dropped and reported), JSON types, enums.
A required string that is empty or only whitespace counts as missing, as in gate checks.
The same check runs before every call a workflow makes (``ToolClient.check_arguments``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from canal.jsontypes import Checked, blank, fits, json_type, unstorable_error
from canal.tools.cache import ToolMeta
from canal.tools.rules import RuleSet, enum_values, parse_rules


def rules_of(text: str | None) -> RuleSet:
    return parse_rules(text or "")


def _schema_type(prop: Mapping[str, Any]) -> str | None:
    """The JSON type a property takes, looking through ``anyOf``/``oneOf`` with null."""
    kind = prop.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        return kinds[0] if len(kinds) == 1 else None
    if isinstance(kind, str):
        return kind
    options = [o for o in prop.get("anyOf", prop.get("oneOf", []))
               if isinstance(o, Mapping) and o.get("type") != "null"]
    return _schema_type(options[0]) if len(options) == 1 else None


def _schema_enum(prop: Mapping[str, Any]) -> list[Any] | None:
    if isinstance(prop.get("enum"), list):
        return list(prop["enum"])
    for option in prop.get("anyOf", prop.get("oneOf", [])):
        if isinstance(option, Mapping) and isinstance(option.get("enum"), list):
            return list(option["enum"])
    return None


def _properties(meta: ToolMeta) -> tuple[dict[str, Any], set[str]]:
    schema = meta.input_schema or {}
    props = schema.get("properties") or {}
    return dict(props), set(schema.get("required") or [])


def tool_fields(meta: ToolMeta, rules: RuleSet) -> list[dict[str, Any]]:
    """Every visible field: name, type, required, description, enum, default."""
    props, required = _properties(meta)
    fields = []
    for name, prop in props.items():
        if name in rules.ignore and name not in required:
            continue
        kind = _schema_type(prop)
        item: dict[str, Any] = {"name": name, "type": kind, "required": name in required,
                                "description": (prop.get("description") or "").strip()}
        allowed, labels = _allowed(name, prop, kind, rules)
        if allowed is not None:
            item["enum"] = allowed
        if labels:
            item["enum_labels"] = {str(k): v for k, v in labels.items()}
        if "default" in prop and prop["default"] is not None:
            item["default"] = prop["default"]
        fields.append(item)
    return fields


def _allowed(name: str, prop: Mapping[str, Any], kind: str | None,
             rules: RuleSet) -> tuple[list[Any] | None, dict[Any, str]]:
    if kind == "array":  # an enum on an array field constrains its items
        prop = prop.get("items") or {}
        kind = _schema_type(prop)
    if name in rules.enums:
        values, labels = enum_values(kind, tuple(rules.enums[name]))
        return list(values), dict(labels)
    return _schema_enum(prop), {}


def describe(meta: ToolMeta, rules: RuleSet, required_only: bool = False) -> dict[str, Any]:
    """The ``canal meta`` document."""
    fields = tool_fields(meta, rules)
    if required_only:
        fields = [f for f in fields if f["required"]]
    props, required = _properties(meta)
    return {
        "status": "ok", "name": meta.name, "server": meta.server, "tool": meta.tool,
        "description": meta.description, "annotations": meta.annotations,
        "notes": list(rules.notes), "fields": fields,
        "ignored": sorted(n for n in props if n in rules.ignore and n not in required),
    }


def check_arguments(meta: ToolMeta, rules: RuleSet, arguments: Any) -> Checked:
    """Check a call's arguments against the tool's metadata and rules; never raises."""
    check = Checked()
    if not isinstance(arguments, Mapping):
        check.errors.append({"field": "", "message":
                             f"expected a JSON object, got {json_type(arguments)}"})
        return check
    # what canal could not store, it does not send either (a lone surrogate cannot be sent)
    check.errors = [e for e in (unstorable_error(n, v) for n, v in arguments.items()) if e]
    if check.errors:
        return check
    props, required = _properties(meta)
    if not props:  # the tool declares no fields: nothing to check against
        check.data = dict(arguments)
        return check
    visible = {f["name"]: f for f in tool_fields(meta, rules)}
    for name, value in arguments.items():
        if name not in visible:
            check.dropped.append(str(name))
            continue
        if value is None:
            continue
        spec = visible[name]
        if spec["type"] and not fits(value, spec["type"]):
            check.errors.append({"field": name, "message":
                                 f"expected {spec['type']}, got {json_type(value)}"})
        elif "enum" in spec and any(v not in spec["enum"] for v in
                                    (value if spec["type"] == "array" else [value])):
            shown = ", ".join(map(str, spec["enum"]))
            check.errors.append({"field": name, "message": f"must be one of: {shown}"})
        else:
            check.data[name] = value
    check.missing = [n for n in props if n in required and blank(arguments.get(n))]
    return check


def checked_schema(meta: ToolMeta, rules: RuleSet) -> dict[str, Any]:
    """The tool's input schema as ``check_arguments`` enforces it: each visible field's
    type and allowed values, the rules' ENUMs in place of the schema's (an array's enum
    constrains its items), and ``additionalProperties`` when the schema states it."""
    fields = tool_fields(meta, rules)
    props: dict[str, Any] = {}
    for spec in fields:
        prop: dict[str, Any] = {"type": spec["type"]} if spec["type"] else {}
        if "enum" in spec:
            if spec["type"] == "array":
                prop["items"] = {"enum": spec["enum"]}
            else:
                prop["enum"] = spec["enum"]
        props[spec["name"]] = prop
    out = {"type": "object", "properties": props,
           "required": [f["name"] for f in fields if f["required"]]}
    if "additionalProperties" in (meta.input_schema or {}):
        out["additionalProperties"] = meta.input_schema["additionalProperties"]
    return out
