"""Static validation: every problem in a workflow, found before anything runs.

Checks the shape of each step (an automated step needs a tool, only interactive steps have
gates), every gate field (defaults, enums and bounds agree with the type; patterns compile;
an ``example`` passes the field's own type, enum, pattern and bounds), every ``{{...}}``
reference in input mappings and step bodies (known step, earlier step, right namespace for
the step's type, declared gate field, well-formed syntax) and the phase contracts, ``when``
and ``verify`` (``canal.spec.phases``). Problems are collected, never raised one at a time;
a warning (``Problem.warning``) does not make a workflow invalid.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet
from pathlib import Path

from canal.errors import Problem, WorkflowInvalid
from canal.spec.loader import Files, parse_files, workflow_files
from canal.spec.models import FieldSpec, StepSpec, WorkflowSpec
from canal.spec.patterns import PATTERN_SECONDS, PatternTimeout, pattern_error, pattern_found
from canal.spec.phases import phase_problems
from canal.spec.templates import Malformed, Reference, scan, walk_strings

STEP_ID = re.compile(r"[A-Za-z0-9_][\w-]*")
_PY_TYPES = {
    "string": (str,), "integer": (int,), "number": (int, float),
    "boolean": (bool,), "array": (list, tuple), "object": (dict,),
}


def check_workflow(folder: Path) -> tuple[WorkflowSpec | None, list[Problem]]:
    """Read and validate ``folder``: the spec (when readable) and every problem found."""
    return check_files(folder.name, workflow_files(folder), str(folder))


def check_files(name: str, files: Files,
                path: str = "") -> tuple[WorkflowSpec | None, list[Problem]]:
    """Parse and validate a workflow's files: the spec (when readable) and every problem."""
    spec, problems, unreadable = parse_files(name, files, path)
    if spec is not None:
        problems.extend(validate_spec(spec, unreadable))
    return spec, problems


def validate_spec(spec: WorkflowSpec,
                  unreadable: AbstractSet[str] = frozenset()) -> list[Problem]:
    """Every static problem of a loaded spec. ``unreadable`` are ids of steps that failed
    to parse: references to them are not reported a second time."""
    problems: list[Problem] = []
    seen: dict[str, StepSpec] = {}
    for step in spec.steps:
        if step.id in seen:
            problems.append(Problem(step.path, f"step id is also used by {seen[step.id].path}",
                                    key="id", text=step.id))
        seen.setdefault(step.id, step)
        if not STEP_ID.fullmatch(step.id):
            out_key = "id" if step.id != _slug(step.path) else None
            problems.append(Problem(step.path, "a step id is letters, digits, '_' and '-' "
                                               "(it is used in {{...}} references)",
                                    key=out_key, text=step.id))
        problems.extend(_check_shape(step))
        for name, field in step.gate.items():
            problems.extend(_check_field(step, name, field))
    problems.extend(_check_allowed_tools(spec))
    by_id = {s.id: s for s in spec.steps}
    for index, step in enumerate(spec.steps):
        earlier = {s.id for s in spec.steps[:index]}
        texts = [("body", step.body, earlier)]
        if step.automation is not None:
            texts += [(f"automation.input_mapping.{k}", v, earlier)
                      for k, v in walk_strings(step.automation.input_mapping)]
        if step.compensate is not None:  # runs after the step: its own result is known
            texts += [(f"compensate.input_mapping.{k}", v, earlier | {step.id})
                      for k, v in walk_strings(step.compensate.input_mapping)]
        for key, text, known in texts:
            for part in scan(text):
                problem = _check_reference(step, key, part, by_id, known, unreadable)
                if problem is not None:
                    problems.append(problem)

    def check(step: StepSpec, key: str, part: Reference | Malformed,
              known: set[str]) -> Problem | None:
        return _check_reference(step, key, part, by_id, known, unreadable)

    return problems + phase_problems(spec, check)


def _check_allowed_tools(spec: WorkflowSpec) -> list[Problem]:
    """Every tool a step calls must be on the workflow's ``tools`` list, when it has one."""
    if spec.tools is None:
        return []
    allowed = ", ".join(spec.tools) or "none"
    out = []
    for step in spec.steps:
        calls = [("automation.tool", step.automation.tool if step.automation else None),
                 ("compensate.tool", step.compensate.tool if step.compensate else None),
                 ("verify.tool", step.verify.tool if step.verify else None)]
        for key, tool in calls:
            if tool is not None and tool not in spec.tools:
                out.append(Problem(step.path, f"not among the tools {spec.entry} allows "
                                              f"({allowed})", key=key, text=tool))
    return out


def _slug(path: str) -> str:
    return path.rsplit("/", 1)[-1].split("-", 1)[-1].removesuffix(".md")


def _check_shape(step: StepSpec) -> list[Problem]:
    out = []
    if step.type == "automated":
        if step.automation is None:
            out.append(Problem(step.path, "an automated step needs 'automation: {tool: ...}'",
                               key="automation"))
        if step.gate:
            out.append(Problem(step.path, "only interactive steps have a gate", key="gate"))
    else:
        if step.automation is not None:
            out.append(Problem(step.path, f"a {step.type} step does not call tools; "
                                          "use type: automated", key="automation"))
        if step.type == "notification" and step.gate:
            out.append(Problem(step.path, "a notification takes no data; use type: interactive",
                               key="gate"))
        for key in ("retry", "timeout", "compensate", "confirm"):
            if getattr(step, key) is not None:
                out.append(Problem(step.path, "only automated steps call tools", key=key))
    return out


def _check_field(step: StepSpec, name: str, field: FieldSpec) -> list[Problem]:
    out = []
    key = f"gate.schema.{name}"
    types = _PY_TYPES[field.type]

    def wrong(value: object) -> bool:
        return isinstance(value, bool) != (field.type == "boolean") or not isinstance(value, types)

    if not re.fullmatch(r"[A-Za-z_][\w-]*", name):
        out.append(Problem(step.path, "field names are letters, digits, '_' and '-'", key=key))
    if field.default is not None and wrong(field.default):
        out.append(Problem(step.path, f"default is not of type {field.type}",
                           key=f"{key}.default", text=repr(field.default)))
    if field.required and field.default is not None:
        out.append(Problem(step.path, "a required field cannot have a default (make it "
                                      "optional)", key=f"{key}.default"))
    for value in field.enum or ():
        if wrong(value):
            out.append(Problem(step.path, f"enum value is not of type {field.type}",
                               key=f"{key}.enum", text=repr(value)))
    if field.enum is not None and field.default is not None and field.default not in field.enum:
        out.append(Problem(step.path, "default is not one of the enum values",
                           key=f"{key}.default", text=repr(field.default)))
    if field.pattern is not None:
        if field.type != "string":
            out.append(Problem(step.path, "pattern applies to strings only", key=f"{key}.pattern"))
        error = pattern_error(field.pattern)
        if error is not None:
            out.append(Problem(step.path, f"not a regular expression: {error}",
                               key=f"{key}.pattern", text=field.pattern))
    if field.allow_empty and field.type != "string":
        out.append(Problem(step.path, "allow_empty applies to strings only (only text can be "
                                      "empty)", key=f"{key}.allow_empty"))
    if field.min is not None and field.max is not None and field.min > field.max:
        out.append(Problem(step.path, "min is greater than max", key=f"{key}.min"))
    if (field.min is not None or field.max is not None) and field.type in ("boolean", "object"):
        out.append(Problem(step.path, f"min/max do not apply to {field.type}", key=key))
    if field.example is not None:
        why = "is not of type " + field.type if wrong(field.example) else _misfit(field)
        if why is not None:
            out.append(Problem(step.path, f"example {why}", key=f"{key}.example",
                               text=repr(field.example)))
    return out


def _misfit(field: FieldSpec) -> str | None:
    """Why the field's own ``example`` (of the right type) would be rejected, or None."""
    example = field.example
    if field.enum is not None and example not in field.enum:
        return "is not one of the enum values"
    if field.pattern is not None and isinstance(example, str) and not pattern_error(field.pattern):
        try:
            if not pattern_found(field.pattern, example):
                return f"does not match the pattern {field.pattern}"
        except PatternTimeout:
            return f"took more than {PATTERN_SECONDS:g} s to check against the pattern"
    size = len(example) if isinstance(example, (str, list, tuple)) else example
    if isinstance(size, (int, float)) and not isinstance(size, bool) and (
            (field.min is not None and size < field.min)
            or (field.max is not None and size > field.max)):
        return "is outside the field's min/max"
    return None


def _check_reference(step: StepSpec, key: str, part: Reference | Malformed,
                     by_id: dict[str, StepSpec], earlier: set[str],
                     unreadable: AbstractSet[str]) -> Problem | None:
    def problem(message: str) -> Problem:
        return Problem(step.path, message, key=key, text=part.text)

    if isinstance(part, Malformed):
        return problem(part.message)
    if part.step in unreadable:
        return None
    target = by_id.get(part.step)
    if target is None:
        known = ", ".join(by_id) or "none"
        return problem(f"no step {part.step!r} (known: {known})")
    if target.id == step.id and target.id not in earlier:
        return problem("a step cannot reference itself")
    if part.step not in earlier:
        return problem(f"step {part.step!r} has not run yet at this point "
                       f"(it comes after {step.id!r})")
    if part.namespace == "gate":
        if target.type != "interactive":
            hint = f"; use {{{{result.{target.id}...}}}}" if target.type == "automated" else ""
            return problem(f"step {target.id!r} is {target.type} and has no gate data{hint}")
        field = part.path[0]
        if field not in target.gate:
            known = ", ".join(target.gate) or "none"
            return problem(f"no such field (known: {known})")
    elif target.type != "automated":
        return problem(f"step {target.id!r} is {target.type} and has no result; "
                       f"only automated steps do")
    return None


def load_workflow(folder: Path) -> WorkflowSpec:
    """Load ``folder`` and validate it; raise ``WorkflowInvalid`` listing every problem."""
    return load_files(folder.name, workflow_files(folder), str(folder))


def load_files(name: str, files: Files, path: str = "") -> WorkflowSpec:
    """Parse and validate a workflow from its files (a folder's, or a run's pinned copy)."""
    spec, problems = check_files(name, files, path)
    errors = [p for p in problems if not p.warning]
    if errors or spec is None:
        raise WorkflowInvalid(name, errors)
    return spec
