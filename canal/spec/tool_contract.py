"""Static checks of every call a workflow makes against the tools it names: the contract.

Where ``canal.spec.tool_checks`` warns about a gate that is looser than a tool, these are
errors: calls that cannot work as written. For ``automation``, ``verify`` and
``compensate`` alike:

- the tool must be known (in the tool cache or a configured Python tool), checked only
  when a tool cache exists at all; close names are suggested;
- every required argument is mapped (the step's ``idempotency_key`` argument counts);
- every mapped argument is declared, unless the schema allows additional properties
  (canal's argument check drops an undeclared argument, so the tool would never get it);
- a constant fits the argument's type and enum, and so does text with a reference inside
  (it is always a string);
- a gate field fed unchanged into an argument has a type that can fit it (an integer fits
  a number; a number may hold an integer, which ``tool_checks`` warns about);
- a ``{{result.<step>.<path>}}`` into the result of a tool that declares an output schema
  follows that schema, segment by segment.

The tools' facts come from a ``ToolCatalog`` (in canal, the tool cache with the rules'
ENUMs merged in), so this module never imports the tools layer.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Iterator, Mapping
from typing import Any, Protocol

from canal.errors import Problem
from canal.jsontypes import fits, json_type
from canal.spec.models import StepSpec, WorkflowSpec
from canal.spec.templates import Reference, scan, walk_strings
from canal.spec.tool_checks import gate_field


class ToolCatalog(Protocol):
    """What the validator may know about tools, read from files only."""

    def known_tools(self) -> list[str] | None:
        """Every name a step may use for a tool, or None when there is no tool cache
        (then tool names are not checked)."""
        ...

    def input_schema(self, tool: str) -> Mapping[str, Any] | None:
        """The input schema calls are checked against; None: the tool declares nothing."""
        ...

    def output_schema(self, tool: str) -> Mapping[str, Any] | None:
        """The tool's declared output schema (MCP ``outputSchema``), or None."""
        ...


def contract_problems(spec: WorkflowSpec, catalog: ToolCatalog) -> list[Problem]:
    """Every call of ``spec`` that cannot work with the tools ``catalog`` knows."""
    known = catalog.known_tools()
    out: list[Problem] = []
    for step in spec.steps:
        for key, tool, mapping, key_argument in calls_of(step):
            if known is not None and tool not in known:
                out.append(_unknown_tool(step, key, tool, known))
                continue
            schema = catalog.input_schema(tool)
            if schema is not None:
                out += _arguments(spec, step, key, tool, mapping, key_argument, schema)
        out += _result_paths(spec, step, catalog)
    return out


def calls_of(step: StepSpec) -> Iterator[tuple[str, str, Mapping[str, Any], str | None]]:
    """Every call of ``step``: its key, the tool, the input mapping, the argument that
    receives canal's idempotency key."""
    if step.automation is not None:
        yield ("automation", step.automation.tool, step.automation.input_mapping,
               step.automation.idempotency_key)
    if step.verify is not None:
        yield "verify", step.verify.tool, step.verify.input_mapping, None
    if step.compensate is not None:
        yield "compensate", step.compensate.tool, step.compensate.input_mapping, None


def _unknown_tool(step: StepSpec, key: str, tool: str, known: list[str]) -> Problem:
    bare = set(known)  # suggest a tool once: by its canal name, not also as server.tool
    close = [name for name in difflib.get_close_matches(tool, known, n=6)
             if name.partition(".")[2] not in bare][:3]
    hint = f"did you mean {' or '.join(close)}? " if close else ""
    return Problem(step.path, f"no tool {tool!r} in the tool cache or canal.yaml's Python "
                              f"tools: {hint}fix the name, or run 'canal discover' if its "
                              "server offers it now", key=f"{key}.tool", text=tool)


def _arguments(spec: WorkflowSpec, step: StepSpec, key: str, tool: str,
               mapping: Mapping[str, Any], key_argument: str | None,
               schema: Mapping[str, Any]) -> list[Problem]:
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties:
        return []  # the tool declares no fields: nothing to check against
    out = []
    where = f"{key}.input_mapping"
    for name in schema.get("required") or []:
        if name not in mapping and name != key_argument:
            out.append(Problem(step.path, f"{tool} requires argument {name}, which the step "
                                          f"does not map: add {name}: ... to {where}",
                               key=f"{where}.{name}", text=None))
    extra = schema.get("additionalProperties")
    for name, value in mapping.items():
        prop = properties.get(name)
        if prop is None:
            if extra is True or isinstance(extra, Mapping):
                continue
            close = difflib.get_close_matches(name, list(properties), n=1)
            hint = f"did you mean {close[0]}? " if close else ""
            out.append(Problem(
                step.path, f"{tool} takes no argument {name} (its arguments: "
                           f"{', '.join(properties)}; an IGNORE rule hides one too), so canal "
                           f"would drop it from the call: {hint}rename or remove it",
                key=f"{where}.{name}", text=_shown(value)))
        elif isinstance(prop, Mapping):
            message = _misfit(spec, tool, name, prop, value)
            if message:
                out.append(Problem(step.path, message, key=f"{where}.{name}",
                                   text=_shown(value)))
    return out


def _misfit(spec: WorkflowSpec, tool: str, name: str, prop: Mapping[str, Any],
            value: Any) -> str | None:
    """Why ``value`` can never be a valid argument ``name``, or None."""
    kind, allowed = prop.get("type"), prop.get("enum")
    if value is None:
        return None  # null leaves the argument out, as canal's argument check does
    found = gate_field(spec, value)
    if found is not None:
        field_name, field = found
        if isinstance(kind, str) and not _overlap(field.type, kind):
            return (f"{tool} takes {name} as {kind}, but gate field {field_name} is "
                    f"{field.type}, which never fits: set type: {kind} on gate field "
                    f"{field_name}, or map another value")
        return None
    texts = [text for _, text in walk_strings(value) if "{{" in text]
    if texts and not (isinstance(value, str) and _interpolated(value)):
        return None  # references whose values are known only at run time
    if isinstance(kind, str) and not fits(value, kind):
        what = "text with a reference inside" if texts else f"the constant {json_type(value)}"
        return (f"{tool} takes {name} as {kind}, but the mapping gives {what}: map a value "
                f"of type {kind}")
    if isinstance(allowed, list) and not texts:
        values = value if kind == "array" and isinstance(value, list) else [value]
        bad = [v for v in values if v not in allowed]
        if bad:
            return (f"{tool} accepts only {_shown(allowed)} as {name}; {_shown(bad[0])} is "
                    "not one of them: use one of those values")
    items = prop.get("items")
    if kind == "array" and isinstance(items, Mapping) and isinstance(value, list) and not texts:
        allowed = items.get("enum")
        bad = [v for v in value if isinstance(allowed, list) and v not in allowed]
        if bad:
            return (f"{tool} accepts only {_shown(allowed)} in {name}; {_shown(bad[0])} is "
                    "not one of them: use one of those values")
    return None


def _interpolated(text: str) -> bool:
    """``text`` holds a reference inside longer text, so its value is always a string."""
    parts = list(scan(text))
    return bool(parts) and not (len(parts) == 1 and text.strip() == parts[0].text)


def _overlap(field_type: str, kind: str) -> bool:
    """Whether some value of a gate field of ``field_type`` is a valid ``kind``."""
    numbers = {"integer", "number"}
    return field_type == kind or (field_type in numbers and kind in numbers)


def _result_paths(spec: WorkflowSpec, step: StepSpec, catalog: ToolCatalog) -> list[Problem]:
    """Each result reference of ``step`` that leaves its tool's declared output schema."""
    out = []
    for key, text in _texts(step):
        for part in scan(text):
            if not isinstance(part, Reference) or part.namespace != "result" or not part.path:
                continue
            source = next((s for s in spec.steps if s.id == part.step), None)
            if source is None or source.automation is None:
                continue  # the reference check reports it
            tool = source.automation.tool
            schema = catalog.output_schema(tool)
            if schema is None:
                continue
            message = _off_schema(schema, part.path, tool)
            if message:
                out.append(Problem(step.path, message, key=key, text=part.text))
    return out


def _texts(step: StepSpec) -> Iterator[tuple[str, str]]:
    """Every string of ``step`` that may hold references, with its key."""
    for key, _tool, mapping, _ in calls_of(step):
        for name, text in walk_strings(dict(mapping)):
            yield f"{key}.input_mapping.{name}", text
    if step.verify is not None:
        for name, text in walk_strings(step.verify.expect):
            yield f"verify.expect.{name}", text
    yield "body", step.body


def _off_schema(schema: Mapping[str, Any], path: tuple[str | int, ...], tool: str) -> str | None:
    """Why ``path`` is not in the output ``schema`` of ``tool``, or None (it is, or the
    schema does not say: no properties, a ``$ref``, a choice of schemas)."""
    node: Any = schema
    walked = ""
    for segment in path:
        if not isinstance(node, Mapping):
            return None
        items = node.get("items")
        if node.get("type") == "array" or isinstance(items, Mapping):
            if not (isinstance(segment, int) or str(segment).isdigit()):
                return (f"{tool}'s output schema has a list at {walked or 'the top'}, not "
                        f"an object with {segment}: index it ({walked}[0]...)")
            node = items
        else:
            properties = node.get("properties")
            if not isinstance(properties, Mapping):
                return None
            if str(segment) in properties:
                node = properties[str(segment)]
            else:
                extra = node.get("additionalProperties")
                if extra is True or isinstance(extra, Mapping):
                    return None
                at = f" at {walked}" if walked else ""
                return (f"{tool}'s output schema has no {segment}{at} (it has: "
                        f"{', '.join(properties) or 'nothing'}): follow the schema")
        walked += f"[{segment}]" if isinstance(segment, int) else (
            f".{segment}" if walked else str(segment))
    return None


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, allow_nan=False)
