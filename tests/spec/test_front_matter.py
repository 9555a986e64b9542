"""Front matter is untrusted: only JSON values, bounded nesting, strict booleans, text that
every store can keep, and step-order prefixes in ASCII digits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from canal.errors import Problem
from canal.spec import check_workflow, load_workflow
from canal.spec.frontmatter import MAX_DEPTH, read_front
from tests.conftest import write_workflow

ASK = "---\ntype: interactive\ngate:\n  schema:\n    a: {type: string}\n---\nAsk.\n"


def problems(folder: Path) -> list[str]:
    return [str(p) for p in check_workflow(folder)[1]]


def call_with(mapping_yaml: str) -> str:
    """An automated step whose input_mapping is the YAML flow mapping ``mapping_yaml``."""
    return f"---\ntype: automated\nautomation:\n  tool: t\n  input_mapping: {mapping_yaml}\n---\n"


# --- only JSON values ------------------------------------------------------------------


@pytest.mark.parametrize(("value", "kind"), [
    ("!!binary aGVsbG8=", "bytes"),
    ("!!set {a, b}", "set"),
    ("!!set [a]", "a set (!!set)"),  # not even a set: PyYAML raised TypeError
    ("!!timestamp 2024-01-01", "a date (!!timestamp)"),
    ("!!timestamp 2024-01-01T10:00:00Z", "a date (!!timestamp)"),
    ("!!timestamp 99999-01-01", "a date (!!timestamp)"),  # PyYAML: AttributeError
    ("!!omap [{a: 1}]", "an ordered map (!!omap)"),
    ("!!pairs [[a, 1]]", "a list of pairs (!!pairs)"),
    ("{1: one}", "a map with a key that is not a string (1)"),
    ("{null: one}", "a map with a key that is not a string (None)"),
])
def test_values_json_cannot_hold_are_problems(workflows: Path, value: str, kind: str) -> None:
    folder = write_workflow(workflows, "w", {"01-call.md": call_with(f"{{x: {value}}}")})
    found = problems(folder)
    assert len(found) == 1, found
    assert found[0].startswith("references/01-call.md: automation.input_mapping.x")
    assert kind in found[0] and "not a JSON value" in found[0]


@pytest.mark.parametrize(("value", "message"), [
    ("!!bool maybe", "not a valid !!bool value ('maybe')"),
    ("!!int abc", "not a valid !!int value (invalid literal for int() with base 10: 'abc')"),
    ("!!map [1]", "expected a mapping, but found a list"),
    ("{? [1] : y}", "found unhashable key"),
])
def test_a_value_that_does_not_fit_its_tag_is_a_yaml_error(workflows: Path, value: str,
                                                           message: str) -> None:
    # each of these raised KeyError, ValueError or TypeError out of the loader
    folder = write_workflow(workflows, "w", {"01-call.md": call_with(f"{{x: {value}}}")})
    assert problems(folder) == [f"references/01-call.md:5: YAML error: {message}"]


def test_a_bare_date_is_text_as_in_json(workflows: Path) -> None:
    # YAML 1.1 reads 2024-01-01 as a date, which JSON has no type for; canal reads it as
    # the text it is (YAML 1.2's JSON schema does the same).
    folder = write_workflow(workflows, "w", {"01-call.md": call_with(
        "{day: 2024-01-01, at: 2024-01-01T10:00:00Z}")})
    spec = load_workflow(folder)
    assert spec.steps[0].automation is not None
    assert spec.steps[0].automation.input_mapping == {"day": "2024-01-01",
                                                      "at": "2024-01-01T10:00:00Z"}


@pytest.mark.parametrize("number", [".nan", ".inf", "-.inf", ".NaN", "1.0e+400"])
@pytest.mark.parametrize("key", ["default", "min", "max"])
def test_non_finite_numbers_in_a_gate_are_problems(workflows: Path, number: str,
                                                   key: str) -> None:
    text = f"---\ntype: interactive\ngate:\n  schema:\n    n: {{type: number, {key}: {number}}}\n---\n"
    folder = write_workflow(workflows, "w", {"01-ask.md": text})
    found = problems(folder)
    assert f"references/01-ask.md: gate.schema.n.{key}: not a JSON value: a number that is " \
           "not finite" in found[0]


@pytest.mark.parametrize("where", ["constant", "nested"])
def test_non_finite_constants_are_problems(workflows: Path, where: str) -> None:
    mapping = "{x: .nan}" if where == "constant" else "{x: {y: [1, .inf]}}"
    folder = write_workflow(workflows, "w", {"01-call.md": call_with(mapping)})
    key = "x" if where == "constant" else "x.y.1"
    assert problems(folder) == [f"references/01-call.md: automation.input_mapping.{key}: not a "
                                "JSON value: a number that is not finite"]


def test_workflow_md_is_checked_too(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"01-ask.md": ASK},
                            entry="---\nname: w\nversion: .nan\n---\n")
    assert problems(folder) == ["WorkFlow.md: version: not a JSON value: a number that is not "
                                "finite"]


# --- text every store can keep ---------------------------------------------------------


@pytest.mark.parametrize("where", ["body", "entry body", "front matter"])
def test_a_nul_character_is_a_problem(workflows: Path, where: str) -> None:
    step, entry = ASK, None
    if where == "body":
        step = ASK + "before\x00after\n"
    elif where == "entry body":
        entry = "---\nname: w\n---\nline one\nnul \x00 here\n"
    else:
        step = "---\ntype: interactive\ntitle: \"a\\0b\"\n---\n"
    folder = write_workflow(workflows, "w", {"01-ask.md": step}, entry=entry)
    found = problems(folder)
    assert len(found) == 1, found
    assert "NUL character" in found[0]
    assert found[0].startswith("WorkFlow.md" if where == "entry body" else "references/01-ask.md")


def test_a_lone_surrogate_escape_is_a_problem(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {
        "01-ask.md": "---\ntype: interactive\ntitle: \"a\\uD800b\"\n---\n"})
    assert problems(folder) == ["references/01-ask.md: title: not a JSON value: text that is "
                                "not valid Unicode (a lone surrogate)"]


# --- bounded nesting --------------------------------------------------------------------


@pytest.mark.parametrize("shape", ["[" * 600 + "]" * 600, "{a: " * 600 + "1" + "}" * 600])
def test_deep_nesting_is_a_problem_not_a_crash(workflows: Path, shape: str) -> None:
    folder = write_workflow(workflows, "w", {"01-call.md": call_with(f"{{x: {shape}}}")})
    found = problems(folder)
    assert len(found) == 1, found
    assert found[0].startswith("references/01-call.md:5: YAML error: nested more than "
                               f"{MAX_DEPTH} levels deep")


def test_nesting_up_to_the_limit_loads(workflows: Path) -> None:
    # front matter (1) > automation (2) > input_mapping (3) > the lists in x (4, 5, ...)
    depth = MAX_DEPTH - 3
    folder = write_workflow(workflows, "w", {
        "01-call.md": call_with("{x: " + "[" * depth + "]" * depth + "}")})
    assert problems(folder) == []
    folder = write_workflow(workflows, "v", {
        "01-call.md": call_with("{x: " + "[" * (depth + 1) + "]" * (depth + 1) + "}")})
    assert "nested more than" in problems(folder)[0]


# --- strict booleans ---------------------------------------------------------------------


@pytest.mark.parametrize("value", ["'yes'", "'true'", "1", "0", "'no'", "1.0", "'on'"])
@pytest.mark.parametrize(("step", "key"), [
    ("---\ntype: interactive\ngate:\n  schema:\n    a: {{type: string, required: {v}}}\n---\n",
     "gate.schema.a.required"),
    ("---\ntype: interactive\ngate:\n  schema:\n    a: {{type: string, sensitive: {v}}}\n---\n",
     "gate.schema.a.sensitive"),
    ("---\ntype: automated\nconfirm: {v}\nautomation: {{tool: t}}\n---\n", "confirm"),
    ("---\ntype: automated\nautomation: {{tool: t, idempotent: {v}}}\n---\n",
     "automation.idempotent"),
])
def test_booleans_are_strict(workflows: Path, value: str, step: str, key: str) -> None:
    folder = write_workflow(workflows, "w", {"01-s.md": step.format(v=value)})
    found = problems(folder)
    assert found == [f"references/01-s.md: {key}: Input should be a valid boolean"], found


@pytest.mark.parametrize(("front", "key"), [
    ("retry: '3'\n", "retry"),
    ("retry: {attempts: '3'}\n", "retry.attempts"),
    ("retry: {attempts: 2.0}\n", "retry.attempts"),
    ("timeout: '30'\n", "timeout"),
])
# retry: '3' was refused before too; the others were read as numbers
def test_numbers_are_not_read_from_text(workflows: Path, front: str, key: str) -> None:
    step = f"---\ntype: automated\n{front}automation: {{tool: t}}\n---\n"
    folder = write_workflow(workflows, "w", {"01-s.md": step})
    found = problems(folder)
    assert len(found) == 1 and found[0].startswith(f"references/01-s.md: {key}"), found


def test_true_and_false_still_load(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {
        "01-ask.md": "---\ntype: interactive\ngate:\n  schema:\n"
                     "    a: {type: string, required: true, sensitive: false}\n---\n",
        "02-call.md": "---\ntype: automated\nconfirm: false\ntimeout: 5\nretry: 2\n"
                      "automation: {tool: t, idempotent: true}\n---\n"})
    spec = load_workflow(folder)
    assert spec.steps[0].gate["a"].required is True
    assert spec.steps[1].confirm is False and spec.steps[1].timeout == 5
    assert spec.steps[1].retry is not None and spec.steps[1].retry.attempts == 2


# --- step order prefixes ------------------------------------------------------------------


@pytest.mark.parametrize("name", ["٠١-arabic.md", "０１-fullwidth.md", "१-devanagari.md",
                                  "1٠-mixed.md"])
def test_only_ascii_digits_order_steps(workflows: Path, name: str) -> None:
    folder = write_workflow(workflows, "w", {"01-ask.md": ASK, name: ASK})
    spec = load_workflow(folder)
    assert [s.id for s in spec.steps] == ["ask"]


def test_json_values_round_trip(workflows: Path) -> None:
    values: dict[str, Any] = {"s": "x", "i": 1, "f": 1.5, "b": True, "n": None,
                              "l": [1, "a"], "m": {"k": "v"}}
    mapping = "{s: x, i: 1, f: 1.5, b: true, n: null, l: [1, a], m: {k: v}}"
    folder = write_workflow(workflows, "w", {"01-call.md": call_with(mapping)})
    automation = load_workflow(folder).steps[0].automation
    assert automation is not None and automation.input_mapping == values


@pytest.mark.parametrize("bound", ["min", "max"])
def test_gate_bounds_are_not_read_from_text(workflows: Path, bound: str) -> None:
    text = f"---\ntype: interactive\ngate:\n  schema:\n    n: {{type: integer, {bound}: '5'}}\n---\n"
    folder = write_workflow(workflows, "w", {"01-ask.md": text})
    found = problems(folder)
    assert found and all(p.startswith(f"references/01-ask.md: gate.schema.n.{bound}")
                         for p in found), found


@pytest.mark.parametrize(("number", "message"), [
    (str(2**63), ": automation.input_mapping.x: not a JSON value: an integer outside the 64-bit "
                 "range"),
    (str(-(2**63) - 1), ": automation.input_mapping.x: not a JSON value: an integer outside the "
                        "64-bit range"),
    ("0b" + "1" * 20_000, ": automation.input_mapping.x: not a JSON value: an integer outside "
                          "the 64-bit range"),
    ("1" * 5000, ":5: YAML error: not a valid !!int value (Exceeds the limit (4300 digits)"),
])
def test_integers_a_checkpoint_cannot_hold_are_problems(workflows: Path, number: str,
                                                        message: str) -> None:
    folder = write_workflow(workflows, "w", {"01-call.md": call_with(f"{{x: {number}}}")})
    found = problems(folder)
    assert len(found) == 1 and found[0].startswith(f"references/01-call.md{message}"), found


def test_64_bit_integers_load(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {
        "01-call.md": call_with(f"{{x: {2**63 - 1}, y: {-(2**63)}}}")})
    automation = load_workflow(folder).steps[0].automation
    assert automation is not None and automation.input_mapping == {"x": 2**63 - 1,
                                                                   "y": -(2**63)}


YAML_PIECES = st.sampled_from([
    "a", "b", "1", "0x1f", "1.5", ".nan", ".inf", "2024-01-01", "yes", "null", "~", ":", ": ",
    ", ", "- ", "[", "]", "{", "}", "? ", "\n", "  ", "'", '"', "\\0", "\\uD800", "!!binary ",
    "!!set ", "!!omap ", "!!pairs ", "!!timestamp ", "!!bool ", "!!int ", "!!map ", "!!seq ",
    "!!str ", "!!float ", "!!null ", "!!python/tuple ", "<<: ", "&x ", "*x", "#", "|", ">",
    "\x00", "\ufeff", "9" * 30,
])


@settings(max_examples=400, deadline=None)
@given(st.lists(YAML_PIECES, max_size=30).map("".join))
def test_any_front_matter_is_json_data_or_problems(text: str) -> None:
    problems_found: list[Problem] = []
    data, _ = read_front("a.md", f"---\n{text}\n---\nbody\n", problems_found)
    if data is None:
        assert problems_found
    else:
        assert problems_found == []
        assert json.loads(json.dumps(data, allow_nan=False)) == data
