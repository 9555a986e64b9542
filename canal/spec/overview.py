"""A workflow at a glance, for choosing it before starting it (``canal show``).

``overview(spec)`` is a pure function of a validated ``WorkflowSpec``: it reads no tool
cache, starts no server and compiles no graph, so it answers as fast as the files load. It
tells an agent what the workflow will do, and with which fixed values, so it can judge
whether the workflow fits the user's request before a run exists:

* the workflow's ``name`` (as ``workflow``), ``description``, ``version`` when set, and
  its allow-lists ``tools`` and ``servers`` when given;
* ``steps`` in execution order, each ``{"id", "type"}`` plus its ``title`` when set and
  its ``when`` condition as written (reference paths without braces) when it has one;
* an interactive step: ``asks``, one compact line per gate field (``"string, required"``,
  ``"integer 1..100, default 10"``, ``"integer, required, one of [0,1,2,3]"``; bounds of a
  string are its ``length``, of an array its ``items``; values as compact JSON; a pattern
  last, as written). A sensitive field says ``sensitive`` and shows its type, whether it
  is required and its bounds, never its default (``default hidden``) nor its allowed
  values. An empty ``asks`` is a plain acknowledgement;
* an automated step: its ``tool``; ``constants``, the arguments it sends whatever the run
  holds, as their JSON values; ``from``, the arguments fed by earlier steps: a value that
  is exactly one reference as its path without braces (``gate.ask.sku``), text that mixes
  words and references as its template text. An argument that is an object or list
  holding both is split into its parts under dotted paths (``options.region``,
  ``tags[0]``), as ``verify.expect`` writes paths. Then, when the step has them:
  ``verify`` (``{"tool", "expect": [paths]}``), ``confirm`` (as written: a tool marked
  destructive is confirmed anyway; ``canal plan`` says so per run) and ``compensate`` (the
  undoing tool's name);
* a notification: nothing more than its title.

Bodies (the instructions shown at each step) are left out: they are written for the
moment the step is current, hold references that mean something only in a run, and are
wrapped prose whose first line is often half a sentence. A step's ``title`` is its
summary. Tool schemas are left out too: ``canal meta TOOL`` shows one.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from canal.spec.models import FieldSpec, StepSpec, WorkflowSpec
from canal.spec.templates import Reference, scan

_BOUND_NOUNS = {"string": "length", "array": "items"}


def overview(spec: WorkflowSpec) -> dict[str, Any]:
    """The overview document of ``spec`` (see the module docstring)."""
    document: dict[str, Any] = {"status": "ok", "workflow": spec.name,
                                "description": spec.description}
    if spec.version is not None:
        document["version"] = spec.version
    if spec.tools is not None:
        document["tools"] = list(spec.tools)
    if spec.servers is not None:
        document["servers"] = list(spec.servers)
    document["steps"] = [_step(step) for step in spec.steps]
    return document


def _step(step: StepSpec) -> dict[str, Any]:
    shown: dict[str, Any] = {"id": step.id, "type": step.type}
    if step.title:
        shown["title"] = step.title
    if step.when is not None:
        shown["when"] = step.when
    if step.type == "interactive":
        shown["asks"] = {name: field_line(field) for name, field in step.gate.items()}
    elif step.type == "automated" and step.automation is not None:
        shown["tool"] = step.automation.tool
        constants: dict[str, Any] = {}
        fed: dict[str, str] = {}
        for path, value in _arguments(step.automation.input_mapping):
            if isinstance(value, str) and _references(value):
                fed[path] = _source(value)
            else:
                constants[path] = value
        shown["constants"], shown["from"] = constants, fed
        if step.verify is not None:
            shown["verify"] = {"tool": step.verify.tool, "expect": list(step.verify.expect)}
        if step.confirm is not None:
            shown["confirm"] = step.confirm
        if step.compensate is not None:
            shown["compensate"] = step.compensate.tool
    return shown


def field_line(field: FieldSpec) -> str:
    """One gate field in a few words: type and bounds, then what else is set."""
    bounds, noun = _bounds(field), _BOUND_NOUNS.get(field.type)
    parts = [f"{field.type} {bounds}" if bounds and not noun else field.type]
    if field.required:
        parts.append("required")
    if bounds and noun:
        parts.append(f"{noun} {bounds}")
    if field.sensitive:
        parts.append("sensitive")
        if field.default is not None:
            parts.append("default hidden")
        return ", ".join(parts)
    if field.enum is not None:
        parts.append(f"one of {_compact(list(field.enum))}")
    if field.default is not None:
        parts.append(f"default {_compact(field.default)}")
    if field.pattern is not None:
        parts.append(f"pattern {field.pattern}")  # last: a pattern may hold a comma
    return ", ".join(parts)


def _bounds(field: FieldSpec) -> str:
    """``min``/``max`` as ``1..64``, ``>= 1`` or ``<= 64``; "" when neither is set."""
    low, high = field.min, field.max
    if low is not None and high is not None:
        return f"{_compact(low)}..{_compact(high)}"
    if low is not None:
        return f">= {_compact(low)}"
    if high is not None:
        return f"<= {_compact(high)}"
    return ""


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def _arguments(value: Any, path: str = "") -> Iterator[tuple[str, Any]]:
    """``(path, value)`` for each part of an input mapping that is all constant or one
    string: a value that mixes constants and references is split into its parts."""
    if isinstance(value, dict) and (not path or _templated(value)):
        for key, item in value.items():
            yield from _arguments(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list) and _templated(value):
        for index, item in enumerate(value):
            yield from _arguments(item, f"{path}[{index}]")
    else:
        yield path, value


def _templated(value: Any) -> bool:
    """Whether ``value`` holds a reference anywhere (a container that does is shown by its
    parts)."""
    if isinstance(value, str):
        return bool(_references(value))
    if isinstance(value, dict):
        return any(_templated(item) for item in value.values())
    if isinstance(value, list):
        return any(_templated(item) for item in value)
    return False


def _references(text: str) -> list[Reference]:
    return [part for part in scan(text) if isinstance(part, Reference)]


def _source(text: str) -> str:
    """Where a templated value comes from: one reference as its path without braces, text
    around references as it is written."""
    refs = _references(text)
    if len(refs) == 1 and text.strip() == refs[0].text:
        return refs[0].text[2:-2].strip()
    return text
