"""Static checks of the phase contracts (DESIGN.md §7): ``when`` conditions and ``verify``.

A ``when`` path is checked like a template reference (the step exists and comes earlier,
the namespace fits its type, the gate field is declared); its operators must be known and
their operands well formed; against a declared gate field, an operand must be able to
match (the type fits, an enum value is one of the field's). A ``verify`` belongs to an
automated step; its mapping and its expected values may reference the step's own result.

A step that may be skipped (it has a ``when``) leaves its values absent: every other
step's reference to them (in a mapping, a body, a read-back) is a warning, not an error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from canal.errors import Problem
from canal.jsontypes import fits, json_type
from canal.spec.conditions import ORDERING, Clause, Flaw, parse_expect, parse_when
from canal.spec.models import StepSpec, WorkflowSpec
from canal.spec.templates import Malformed, Reference, scan, walk_strings

CheckReference = Callable[[StepSpec, str, "Reference | Malformed", set[str]], "Problem | None"]


def phase_problems(spec: WorkflowSpec, check: CheckReference) -> list[Problem]:
    """Every problem of the steps' ``when`` and ``verify`` keys, and the warnings about
    references to steps that may be skipped. ``check`` judges one template reference."""
    out: list[Problem] = []
    for index, step in enumerate(spec.steps):
        earlier = {s.id for s in spec.steps[:index]}
        if step.when is not None:
            out += _when(spec, step, earlier, check)
        if step.verify is not None:
            out += _verify(step, earlier | {step.id}, check)
    return out + _maybe_skipped(spec)


def read_back_problems(spec: WorkflowSpec, destructive: Callable[[str], bool]) -> list[Problem]:
    """A ``verify`` tool that the tool cache marks destructive (``destructiveHint: true``)."""
    return [Problem(step.path, "the tool is marked destructive (destructiveHint: true); a "
                               "read-back must only read: name a tool that changes nothing",
                    key="verify.tool", text=step.verify.tool)
            for step in spec.steps if step.verify is not None and destructive(step.verify.tool)]


def _flaws(step: StepSpec, flaws: list[Flaw]) -> list[Problem]:
    return [Problem(step.path, f.message, key=f.key, text=f.text) for f in flaws]


def _when(spec: WorkflowSpec, step: StepSpec, earlier: set[str],
          check: CheckReference) -> list[Problem]:
    condition, flaws = parse_when(step.when)
    out = _flaws(step, flaws)
    for test in condition.all_tests():
        key = f"when.{test.key}"
        assert test.reference is not None
        problem = check(step, key, test.reference, earlier)
        if problem is not None:
            out.append(problem)
        elif test.reference.namespace == "gate" and len(test.path) == 1:
            field = spec.step(test.reference.step).gate[str(test.path[0])]
            message = _misfit(test, field.type, field.enum)
            if message:
                out.append(Problem(step.path, message, key=f"{key}.{test.operator}",
                                   text=repr(test.operand)))
        out += _operand_references(step, f"{key}.{test.operator}", test.operand, earlier, check)
    return out


def _misfit(test: Clause, kind: str, enum: tuple[Any, ...] | None) -> str | None:
    """Why ``test`` can never hold on a gate field of type ``kind``, or None."""
    operand, operator = test.operand, test.operator
    if any("{{" in text for _, text in walk_strings(operand)) or operator == "exists":
        return None
    if operator in ("matches",) and kind != "string":
        return f"matches applies to strings; the field is {kind}"
    if operator in ORDERING:
        if kind in ("integer", "number") and not isinstance(operand, str):
            return None
        if kind == "string" and isinstance(operand, str):
            return None
        return f"{operator} compares a {kind} field with {json_type(operand)}; it can never hold"
    values = operand if operator in ("in", "not_in") else [operand]
    for value in values:
        if value is None:
            return "a submitted value is never null; test absence with {exists: false}"
        integral = kind == "integer" and isinstance(value, float) and value.is_integer()
        if not fits(value, kind) and not integral:
            return f"the field is {kind} and {json_type(value)} {value!r} can never equal it"
        if enum is not None and not any(value == e and type(value) is type(e) for e in enum):
            return f"{value!r} is not one of the field's enum values, so it can never equal it"
    return None


def _operand_references(step: StepSpec, key: str, operand: Any, known: set[str],
                        check: CheckReference) -> list[Problem]:
    out = []
    for _, text in walk_strings(operand):
        for part in scan(text):
            problem = check(step, key, part, known)
            if problem is not None:
                out.append(problem)
    return out


def _verify(step: StepSpec, known: set[str], check: CheckReference) -> list[Problem]:
    verify = step.verify
    assert verify is not None
    if step.type != "automated":
        return [Problem(step.path, "only automated steps read back a call", key="verify")]
    out = []
    for name, text in walk_strings(verify.input_mapping):
        out += _operand_references(step, f"verify.input_mapping.{name}", text, known, check)
    tests, flaws = parse_expect(verify.expect)
    out += _flaws(step, flaws)
    for test in tests:
        out += _operand_references(step, f"verify.expect.{test.key}", test.operand, known,
                                   check)
    return out


def _maybe_skipped(spec: WorkflowSpec) -> list[Problem]:
    """A warning for each step's first reference to another step that may be skipped."""
    conditional = {s.id for s in spec.steps if s.when is not None}
    out = []
    for step in spec.steps:
        warned = _tested(step)  # the step's own when already decides on them
        for key, text in _texts(step):
            for part in scan(text):
                if (isinstance(part, Reference) and part.step in conditional
                        and part.step != step.id and part.step not in warned):
                    warned.add(part.step)
                    out.append(Problem(
                        step.path, f"step {part.step!r} runs only when its condition holds; "
                                   "when it is skipped this reference is absent (an argument "
                                   "is left out, text is empty). Give this step a when on it "
                                   "(e.g. {exists: true}) if it needs the value",
                        key=key, text=part.text, warning=True))
    return out


def _tested(step: StepSpec) -> set[str]:
    if step.when is None:
        return set()
    condition, _ = parse_when(step.when)
    return {t.reference.step for t in condition.all_tests() if t.reference is not None}


def _texts(step: StepSpec) -> list[tuple[str, str]]:
    """Every text of ``step`` that may hold references, outside its own ``when``."""
    texts = [("body", step.body)]
    if step.automation is not None:
        texts += [(f"automation.input_mapping.{k}", v)
                  for k, v in walk_strings(step.automation.input_mapping)]
    if step.compensate is not None:
        texts += [(f"compensate.input_mapping.{k}", v)
                  for k, v in walk_strings(step.compensate.input_mapping)]
    if step.verify is not None:
        texts += [(f"verify.input_mapping.{k}", v)
                  for k, v in walk_strings(step.verify.input_mapping)]
        texts += [(f"verify.expect.{k}", v) for k, v in walk_strings(step.verify.expect)]
    return texts
