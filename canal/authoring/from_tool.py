"""``canal new NAME --from-tool TOOL``: a whole working workflow from one tool's fields.

The fields are those ``canal meta TOOL`` shows (its rules applied: ignored system fields
left out, ENUM values with their labels). Three steps: ``collect-arguments`` asks for every
field, ``call-tool`` maps each one onto the tool, ``show-result`` reports the result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from canal.authoring.create import check_new, relative, write_entry
from canal.authoring.files import STEP, document, file_name, write_text
from canal.errors import UsageError
from canal.spec.validate import STEP_ID

ASK, CALL, SHOW = "collect-arguments", "call-tool", "show-result"
_GATE_TYPES = ("string", "integer", "number", "boolean", "array", "object")


def gate_field(field: Mapping[str, Any]) -> dict[str, Any]:
    """One tool field (``canal.tools.meta.tool_fields``) as a gate field."""
    kind = field.get("type") if field.get("type") in _GATE_TYPES else "string"
    desc = field.get("description") or field["name"]
    labels = field.get("enum_labels") or {}
    if labels:
        desc += " (" + ", ".join(f"{k}: {v}" for k, v in labels.items()) + ")"
    out: dict[str, Any] = {"type": kind, "required": bool(field.get("required")),
                           "desc": desc}
    if field.get("enum") is not None:
        if kind == "array":  # the tool's enum constrains the items; a gate's, the value
            out["desc"] += f"; items one of {', '.join(map(str, field['enum']))}"
        else:
            out["enum"] = list(field["enum"])
    if "default" in field and not out["required"]:
        out["default"] = field["default"]
    return out


def tool_workflow(root: Path, name: str, description: str | None, tool: str,
                  tool_description: str, fields: Sequence[Mapping[str, Any]]
                  ) -> dict[str, Any]:
    """Write workflow ``name`` that asks for ``fields``, calls ``tool`` and reports."""
    summary = (tool_description or "").strip().splitlines()
    description = description or (f"Call {tool}: {summary[0]}" if summary else f"Call {tool}")
    folder = check_new(root, name, description)
    bad = [f["name"] for f in fields if not STEP_ID.fullmatch(str(f["name"]))]
    if bad:
        raise UsageError(f"tool {tool!r} has fields a reference cannot name: "
                         f"{', '.join(bad)}; write this workflow by hand", tool=tool)
    schema = {f["name"]: gate_field(f) for f in fields}
    ask: dict[str, Any] = {"type": "interactive", "title": f"Arguments of {tool}"}
    if schema:
        ask["gate"] = {"schema": schema}
    call = {"type": "automated", "title": f"Call {tool}",
            "automation": {"tool": tool, "input_mapping": {
                field: f"{{{{gate.{ASK}.{field}}}}}" for field in schema}}}
    show = {"type": "notification", "title": "Result"}
    asked = ", ".join(f"{n} ({'required' if f['required'] else 'optional'})"
                      for n, f in schema.items()) or "nothing"
    steps = [
        (ASK, ask, f"Ask the user for the arguments of {tool}: {asked}. "
                   f"{' '.join(summary)}\nSubmit the fields the user gave."),
        (CALL, call, f"canal calls {tool} with the collected arguments. If it fails, show "
                     "the error to the user and ask whether to edit the answers, retry, "
                     "skip or abort."),
        (SHOW, show, f"Show the user what {tool} answered:\n\n{{{{result.{CALL}}}}}"),
    ]
    written = [write_entry(folder, name, description)]
    for index, (step_id, front, body) in enumerate(steps, start=1):
        path = folder / "references" / file_name(index * STEP, step_id)
        write_text(path, document(front, body))
        written.append(path)
    return {"status": "ok", "workflow": name, "files": [relative(root, p) for p in written],
            "renamed": [],
            "next": {"command": "validate",
                     "hint": f"review the files (field descriptions, the instructions), then "
                             f"canal validate {name} and canal start {name}"}}
