"""``when`` conditions and ``verify.expect`` checks (DESIGN.md §7): parsing and evaluation.

A condition maps reference paths (``gate.<step>.<field>``, ``result.<step>.<path>``, the
template grammar without braces) to tests, and holds when every test does. A test is a
plain value (``equals``) or a mapping of operators, all of which must hold; a mapping is
always read as operators, so compare with an object through ``{equals: {...}}``.
``any: [condition, ...]`` holds when one of its conditions does. ``expect`` has the same
tests, its paths going into the read-back result (``quantity``, ``items[0].id``).

Semantics, documented in the README:

* Values compare with JSON types: ``1`` equals ``1.0`` but not ``true``, and ``"1"`` is not
  ``1``. Ordering (``gt``, ``gte``, ``lt``, ``lte``) compares two numbers or two strings;
  any other pair does not hold. ``matches`` searches a string with a regular expression
  (bounded in time like gate patterns; a search that times out does not match).
* An absent value (an optional field not given, a result path the tool did not return, a
  skipped step) equals nothing: ``equals``, ``in``, ordering and ``matches`` do not hold,
  ``not_equals`` and ``not_in`` do, ``exists: false`` does.
* Operands may hold references: ``{lte: "{{result.stock.available}}"}``.
* Evaluation is three-valued for dry runs (``canal plan``): a value not produced yet
  (``UNKNOWN``) leaves a test undecided (None). All-of is False if one test is False, else
  None if one is None; any-of is True if one holds, else None if one is None.

Pure functions of JSON-plain data: no LangGraph, no tools.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from canal.spec.patterns import PatternTimeout, pattern_error, pattern_found
from canal.spec.templates import Reference, parse_path, scan

OPERATORS = ("equals", "not_equals", "in", "not_in", "gt", "gte", "lt", "lte", "matches",
             "exists")
ORDERING = ("gt", "gte", "lt", "lte")
ANY = "any"
MAX_DEPTH = 8  # nested any: lists


class _Unknown:
    """A value a dry run cannot know yet (a result not produced)."""

    def __repr__(self) -> str:
        return "UNKNOWN"


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


UNKNOWN: Any = _Unknown()
ABSENT: Any = _Absent()


@dataclass(frozen=True)
class Clause:
    """One operator applied to the value at one path."""

    key: str                          # the path as written
    path: tuple[str | int, ...]       # below the step (when) or in the read-back (expect)
    operator: str
    operand: Any
    reference: Reference | None = None  # a ``when`` test's reference; None for ``expect``


@dataclass(frozen=True)
class Condition:
    tests: tuple[Clause, ...] = ()
    alternatives: tuple[Condition, ...] | None = None  # ``any:``; None when not given

    def all_tests(self) -> list[Clause]:
        """Every test, inside ``any`` too."""
        out = list(self.tests)
        for alternative in self.alternatives or ():
            out += alternative.all_tests()
        return out


@dataclass(frozen=True)
class Flaw:
    """What is wrong with a condition, at ``key`` (``when.gate.ask.rush``)."""

    key: str
    message: str
    text: str | None = None


@dataclass
class _Parse:
    flaws: list[Flaw] = field(default_factory=list)

    def flaw(self, key: str, message: str, text: Any = None) -> None:
        self.flaws.append(Flaw(key, message, None if text is None else str(text)))


def parse_when(data: Any, key: str = "when") -> tuple[Condition, list[Flaw]]:
    """A ``when`` mapping as a Condition, and everything wrong with it."""
    parse = _Parse()
    return _condition(data, key, parse, 0), parse.flaws


def parse_expect(data: Any, key: str = "verify.expect") -> tuple[tuple[Clause, ...], list[Flaw]]:
    """A ``verify.expect`` mapping as tests, and everything wrong with it."""
    parse = _Parse()
    if not isinstance(data, Mapping) or not data:
        parse.flaw(key, "expect maps at least one path in the read-back result to its "
                        "expected value")
        return (), parse.flaws
    tests: list[Clause] = []
    for name, test in data.items():
        where = f"{key}.{name}"
        path = parse_path(str(name))
        if path is None:
            parse.flaw(where, "not a path into the result (keys and [index], e.g. "
                              "items[0].id)", name)
            continue
        tests += _tests(where, str(name), path, None, test, parse)
    return tuple(tests), parse.flaws


def _condition(data: Any, key: str, parse: _Parse, depth: int) -> Condition:
    if not isinstance(data, Mapping) or not data:
        parse.flaw(key, "a condition maps reference paths (gate.<step>.<field>, "
                        "result.<step>.<path>) to values or operators")
        return Condition()
    tests: list[Clause] = []
    alternatives: list[Condition] | None = None
    for name, test in data.items():
        where = f"{key}.{name}"
        if name == ANY:
            if depth >= MAX_DEPTH:
                parse.flaw(where, f"any is nested more than {MAX_DEPTH} deep")
            elif not isinstance(test, list) or not test:
                parse.flaw(where, "any is a non-empty list of conditions, one of which must "
                                  "hold")
            else:
                alternatives = [_condition(item, f"{where}[{index}]", parse, depth + 1)
                                for index, item in enumerate(test)]
            continue
        found = next(iter(scan("{{" + str(name) + "}}")), None)
        if not isinstance(found, Reference):
            reason = getattr(found, "message", "not a reference path")
            parse.flaw(where, f"{reason} (a when key is gate.<step>.<field> or "
                              "result.<step>.<path>, without braces)", name)
            continue
        tests += _tests(where, str(name), found.path, found, test, parse)
    return Condition(tuple(tests), None if alternatives is None else tuple(alternatives))


def _tests(key: str, name: str, path: tuple[str | int, ...], reference: Reference | None,
           test: Any, parse: _Parse) -> list[Clause]:
    if not isinstance(test, Mapping):
        return [Clause(name, path, "equals", test, reference)]
    if not test:
        parse.flaw(key, "no operator given (known: " + ", ".join(OPERATORS) + ")")
    out = []
    for operator, operand in test.items():
        where = f"{key}.{operator}"
        if operator not in OPERATORS:
            parse.flaw(where, "unknown operator (known: " + ", ".join(OPERATORS) + "; to "
                              "compare with an object write {equals: {...}})", operator)
            continue
        message = _operand_flaw(operator, operand)
        if message:
            parse.flaw(where, message, repr(operand))
            continue
        out.append(Clause(name, path, operator, operand, reference))
    return out


def _operand_flaw(operator: str, operand: Any) -> str | None:
    if operator in ("in", "not_in") and not isinstance(operand, list):
        return f"{operator} takes a list of values"
    if operator == "exists" and not isinstance(operand, bool):
        return "exists takes true or false"
    if operator == "matches":
        if not isinstance(operand, str):
            return "matches takes a regular expression (a string)"
        if "{{" not in operand:
            error = pattern_error(operand)
            if error is not None:
                return f"not a regular expression: {error}"
    if operator in ORDERING and (isinstance(operand, bool)
                                 or not isinstance(operand, (int, float, str))):
        return f"{operator} compares with a number or a string"
    return None


# -- evaluation ------------------------------------------------------------------------


def json_equal(left: Any, right: Any) -> bool:
    """Equality with JSON types: booleans equal only booleans, numbers compare by value."""
    if isinstance(left, bool) or isinstance(right, bool):
        return isinstance(left, bool) and isinstance(right, bool) and left == right
    if _number(left) or _number(right):
        return _number(left) and _number(right) and left == right
    if isinstance(left, Mapping) and isinstance(right, Mapping):
        return left.keys() == right.keys() and all(json_equal(left[k], right[k]) for k in left)
    if isinstance(left, (list, tuple)) and isinstance(right, (list, tuple)):
        return len(left) == len(right) and all(map(json_equal, left, right))
    return type(left) is type(right) and left == right


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def passes(test: Clause, actual: Any, expected: Any) -> bool | None:
    """Whether ``actual`` (or ABSENT/UNKNOWN) passes ``test`` against the resolved
    ``expected``; None when undecided."""
    if actual is UNKNOWN or expected is UNKNOWN:
        return None
    operator, absent = test.operator, actual is ABSENT
    if operator == "exists":
        return (not absent) is expected
    if operator in ("not_equals", "not_in"):
        return not _positive(operator.removeprefix("not_"), actual, expected, absent)
    return _positive(operator, actual, expected, absent)


def _positive(operator: str, actual: Any, expected: Any, absent: bool) -> bool:
    if absent:
        return False
    if operator == "equals":
        return json_equal(actual, expected)
    if operator == "in":
        return isinstance(expected, list) and any(json_equal(actual, e) for e in expected)
    if operator == "matches":
        if not isinstance(actual, str) or not isinstance(expected, str):
            return False
        try:
            return pattern_found(expected, actual)
        except PatternTimeout:
            return False
    both_numbers = _number(actual) and _number(expected)
    if not both_numbers and not (isinstance(actual, str) and isinstance(expected, str)):
        return False
    return {"gt": actual > expected, "gte": actual >= expected, "lt": actual < expected,
            "lte": actual <= expected}[operator]


Reader = Callable[[Clause], Any]       # the value a test looks at, ABSENT or UNKNOWN
Operand = Callable[[Any], Any]       # an operand with its references resolved, or UNKNOWN


def holds(condition: Condition, read: Reader, operand: Operand) -> bool | None:
    """Whether ``condition`` holds (None: undecided)."""
    results = [passes(t, read(t), operand(t.operand)) for t in condition.tests]
    if condition.alternatives is not None:
        results.append(_any([holds(c, read, operand) for c in condition.alternatives]))
    return _all(results)


def _all(results: list[bool | None]) -> bool | None:
    if False in results:
        return False
    return None if None in results else True


def _any(results: list[bool | None]) -> bool | None:
    if True in results:
        return True
    return None if None in results else False


@dataclass(frozen=True)
class Outcome:
    """One ``expect`` test after a read-back."""

    clause: Clause
    passed: bool
    actual: Any
    expected: Any

    def to_error(self, expected: Any = None, shown_apart: bool = False) -> dict[str, Any]:
        """The mismatch as reported: ``{"path", "expected", "actual"}`` (an absent value is
        ``null`` with ``"absent": true``, and so is an expected value whose reference did
        not resolve). With ``shown_apart``, ``expected`` is the expected value as it may be
        shown, when that differs from the one compared (a secret stays sealed)."""
        value = expected if shown_apart else self.expected
        if value is ABSENT or value is UNKNOWN:
            value = None
        shown = value if self.clause.operator == "equals" else {self.clause.operator: value}
        error = {"path": self.clause.key, "expected": shown,
                 "actual": None if self.actual is ABSENT else self.actual}
        if self.actual is ABSENT:
            error["absent"] = True
        return error


def expectations(tests: tuple[Clause, ...], result: Any, operand: Operand) -> list[Outcome]:
    """Every ``expect`` test applied to a read-back ``result``."""
    from canal.spec.templates import MISSING, follow

    out = []
    for test in tests:
        actual = follow(result, test.path)
        actual = ABSENT if actual is MISSING else actual
        expected = operand(test.operand)
        out.append(Outcome(test, passes(test, actual, expected) is True, actual, expected))
    return out
