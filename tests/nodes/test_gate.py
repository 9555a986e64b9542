"""Gate checks: what a submission must look like to complete a step."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from canal.nodes.gate import ACTION_GATE, check_gate
from canal.spec.models import FieldSpec

SCHEMA = {
    "project_name": FieldSpec(type="string", required=True, desc="Project name"),
    "host": FieldSpec(type="string", required=True, pattern=r"^[a-z0-9.-]+\.[a-z]{2,}$"),
    "admins": FieldSpec(type="array", default=["root"]),
    "quota": FieldSpec(type="integer", min=1, max=100, default=10),
    "note": FieldSpec(type="string"),
}
GOOD = {"project_name": "apollo", "host": "apollo.example.com"}


def errors(schema: dict[str, FieldSpec], data: Any) -> list[dict[str, str]]:
    return check_gate(schema, data).errors


def error_of(spec: FieldSpec, value: Any) -> str | None:
    """The one error message for ``value`` in field ``f``, or None when accepted."""
    check = check_gate({"f": spec}, {"f": value})
    assert check.missing == [] and check.dropped == []
    if check.accepted:
        assert check.errors == [] and check.data == {"f": value}
        return None
    assert len(check.errors) == 1 and check.errors[0]["field"] == "f"
    assert check.data == {}
    return check.errors[0]["message"]


def test_a_good_submission_is_accepted_with_defaults() -> None:
    check = check_gate(SCHEMA, GOOD)
    assert check.accepted
    assert check.data == {**GOOD, "admins": ["root"], "quota": 10}
    assert (check.missing, check.errors, check.dropped) == ([], [], [])


@pytest.mark.parametrize("submitted, kind", [
    ([1, 2], "array"), ("text", "string"), (None, "null"), (3, "integer"), (2.5, "number"),
    (True, "boolean"), ([], "array"), ("", "string"),
])
def test_a_submission_that_is_not_an_object_is_one_error(submitted: Any, kind: str) -> None:
    check = check_gate(SCHEMA, submitted)
    assert not check.accepted
    assert check.errors == [{"field": "", "message": f"expected a JSON object, got {kind}"}]
    assert (check.data, check.missing, check.dropped) == ({}, [], [])


def test_missing_required_fields_are_listed_in_schema_order() -> None:
    check = check_gate(SCHEMA, {"quota": 5})
    assert not check.accepted
    assert check.missing == ["project_name", "host"]
    assert check.errors == []


def test_null_counts_as_absent() -> None:
    check = check_gate(SCHEMA, {"project_name": None, "host": "a.example.com",
                                "quota": None, "note": None})
    assert check.missing == ["project_name"]
    assert check.data == {"host": "a.example.com", "admins": ["root"], "quota": 10}
    assert "note" not in check.data


def test_defaults_fill_only_absent_optional_fields() -> None:
    check = check_gate(SCHEMA, {**GOOD, "quota": 50, "admins": []})
    assert check.accepted
    assert check.data["quota"] == 50
    assert check.data["admins"] == []  # an empty list is a value, not an absence
    assert "note" not in check.data  # optional without default stays absent


def test_falsy_values_are_not_absent() -> None:
    # an empty string is an answer only where the field says so (see the blank tests below)
    schema = {"s": FieldSpec(type="string", required=True, allow_empty=True),
              "n": FieldSpec(type="integer", required=True),
              "b": FieldSpec(type="boolean", required=True, default=None),
              "o": FieldSpec(type="object", required=True)}
    check = check_gate(schema, {"s": "", "n": 0, "b": False, "o": {}})
    assert check.accepted
    assert check.data == {"s": "", "n": 0, "b": False, "o": {}}


@pytest.mark.parametrize("text", ["", "   ", "\t\n"])
def test_a_required_string_that_is_empty_or_blank_is_missing(text: str) -> None:
    check = check_gate(SCHEMA, {**GOOD, "project_name": text})
    assert not check.accepted
    assert check.missing == ["project_name"] and check.errors == []
    assert "project_name" not in check.data


@pytest.mark.parametrize("text", ["", "   "])
def test_allow_empty_takes_an_empty_or_blank_string_as_an_answer(text: str) -> None:
    schema = {**SCHEMA, "project_name": FieldSpec(type="string", required=True,
                                                  allow_empty=True)}
    check = check_gate(schema, {**GOOD, "project_name": text})
    assert check.accepted and check.data["project_name"] == text


def test_an_optional_empty_string_is_still_a_value() -> None:
    check = check_gate(SCHEMA, {**GOOD, "note": ""})
    assert check.accepted and check.data["note"] == ""


def test_undeclared_fields_are_dropped_and_reported_but_the_rest_is_accepted() -> None:
    check = check_gate(SCHEMA, {**GOOD, "colour": "red", "hosts": "x", "note": "hi"})
    assert check.accepted
    assert check.dropped == ["colour", "hosts"]
    assert check.data == {**GOOD, "note": "hi", "admins": ["root"], "quota": 10}
    assert "colour" not in check.data and "hosts" not in check.data


def test_missing_and_wrong_fields_are_both_reported() -> None:
    check = check_gate(SCHEMA, {"host": "not a host", "quota": "ten", "extra": 1})
    assert not check.accepted
    assert check.missing == ["project_name"]
    assert check.errors == [
        {"field": "host", "message": r"must match ^[a-z0-9.-]+\.[a-z]{2,}$"},
        {"field": "quota", "message": "expected integer, got string"},
    ]
    assert check.dropped == ["extra"]
    assert "host" not in check.data and "quota" not in check.data


@pytest.mark.parametrize("type_, value, message", [
    ("integer", 3, None),
    ("integer", -7, None),
    ("integer", 3.0, "expected integer, got number"),
    ("integer", 2.5, "expected integer, got number"),
    ("integer", True, "expected integer, got boolean"),
    ("integer", "3", "expected integer, got string"),
    ("number", 3, None),
    ("number", 2.5, None),
    ("number", False, "expected number, got boolean"),
    ("number", "2.5", "expected number, got string"),
    ("boolean", True, None),
    ("boolean", 1, "expected boolean, got integer"),
    ("boolean", "true", "expected boolean, got string"),
    ("string", "x", None),
    ("string", 5, "expected string, got integer"),
    ("string", ["x"], "expected string, got array"),
    ("array", [1, "a"], None),
    ("array", {"a": 1}, "expected array, got object"),
    ("array", "a,b", "expected array, got string"),
    ("object", {"a": 1}, None),
    ("object", [], "expected object, got array"),
])
def test_types(type_: str, value: Any, message: str | None) -> None:
    assert error_of(FieldSpec(type=type_), value) == message


def test_type_errors_are_reported_per_field() -> None:
    schema = {"a": FieldSpec(type="integer"), "b": FieldSpec(type="boolean"),
              "c": FieldSpec(type="string")}
    check = check_gate(schema, {"a": 1.5, "b": "yes", "c": "fine"})
    assert check.errors == [{"field": "a", "message": "expected integer, got number"},
                            {"field": "b", "message": "expected boolean, got string"}]
    assert check.data == {"c": "fine"}


@pytest.mark.parametrize("spec, value, message", [
    (FieldSpec(enum=("dev", "prod")), "dev", None),
    (FieldSpec(enum=("dev", "prod")), "qa", "must be one of: dev, prod"),
    (FieldSpec(enum=("dev", "prod")), "Dev", "must be one of: dev, prod"),
    (FieldSpec(type="integer", enum=(1, 2, 3)), 2, None),
    (FieldSpec(type="integer", enum=(1, 2, 3)), 4, "must be one of: 1, 2, 3"),
    (FieldSpec(type="number", enum=(0.5, 1.5)), 1.5, None),
    (FieldSpec(type="number", enum=(0.5, 1.5)), 1, "must be one of: 0.5, 1.5"),
])
def test_enum(spec: FieldSpec, value: Any, message: str | None) -> None:
    assert error_of(spec, value) == message


@pytest.mark.parametrize("pattern, value, ok", [
    ("abc", "xxabcxx", True),       # unanchored: a substring is enough
    ("abc", "ab", False),
    ("^abc", "abcdef", True),
    ("^abc", "xabc", False),
    ("^abc$", "abc", True),
    ("^abc$", "abcd", False),
    (r"\d{3}", "room 101", True),
    (r"^\d{3}$", "room 101", False),
])
def test_pattern_has_json_schema_search_semantics(pattern: str, value: str, ok: bool) -> None:
    message = error_of(FieldSpec(pattern=pattern), value)
    assert message == (None if ok else f"must match {pattern}")


@pytest.mark.parametrize("spec, value, message", [
    (FieldSpec(type="integer", min=1, max=10), 1, None),
    (FieldSpec(type="integer", min=1, max=10), 10, None),
    (FieldSpec(type="integer", min=1, max=10), 0, "must be at least 1"),
    (FieldSpec(type="integer", min=1, max=10), 11, "must be at most 10"),
    (FieldSpec(type="number", min=0.5), 0.25, "must be at least 0.5"),
    (FieldSpec(type="number", max=2.5), 2.5, None),
    (FieldSpec(type="number", max=2.5), 3, "must be at most 2.5"),
    (FieldSpec(type="number", min=-1), -1.5, "must be at least -1"),
    (FieldSpec(type="string", min=2, max=4), "ab", None),
    (FieldSpec(type="string", min=2, max=4), "a", "must be at least 2 characters"),
    (FieldSpec(type="string", min=2, max=4), "abcde", "must be at most 4 characters"),
    (FieldSpec(type="string", max=3), "héé", None),  # characters, not bytes
    (FieldSpec(type="array", min=1), [], "must be at least 1 items"),
    (FieldSpec(type="array", max=2), [1, 2], None),
    (FieldSpec(type="array", max=2), [1, 2, 3], "must be at most 2 items"),
])
def test_bounds_with_units(spec: FieldSpec, value: Any, message: str | None) -> None:
    assert error_of(spec, value) == message


def test_checks_run_in_order_type_then_enum_then_pattern_then_bounds() -> None:
    spec = FieldSpec(enum=("aa", "bbbb"), pattern="^a", max=3)
    assert error_of(spec, 5) == "expected string, got integer"
    assert error_of(spec, "zz") == "must be one of: aa, bbbb"
    assert error_of(spec, "bbbb") == "must match ^a"
    assert error_of(spec, "aa") is None


def test_defaults_are_not_shared_between_submissions() -> None:
    schema = {"admins": FieldSpec(type="array", default=["root"])}
    first = check_gate(schema, {})
    first.data["admins"].append("intruder")
    assert check_gate(schema, {}).data == {"admins": ["root"]}


@pytest.mark.parametrize("action", ["retry", "skip", "abort"])
def test_action_gate_accepts_the_three_actions(action: str) -> None:
    check = check_gate(ACTION_GATE, {"action": action})
    assert check.accepted
    assert check.data == {"action": action}


@pytest.mark.parametrize("submitted, missing, message", [
    ({"action": "restart"}, [], "must be one of: retry, skip, abort, edit"),
    ({"action": "RETRY"}, [], "must be one of: retry, skip, abort, edit"),
    ({"action": 1}, [], "expected string, got integer"),
    ({}, ["action"], None),
    ({"action": None}, ["action"], None),
])
def test_action_gate_rejects_anything_else(submitted: dict, missing: list[str],
                                           message: str | None) -> None:
    check = check_gate(ACTION_GATE, submitted)
    assert not check.accepted
    assert check.missing == missing
    assert check.errors == ([] if message is None else [{"field": "action", "message": message}])
    assert check.data == {}


# --- properties --------------------------------------------------------------------------

JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
FIELD_NAMES = st.sampled_from(["a", "b", "name", "count", "tags", "opts"])
FIELD = st.one_of(
    st.builds(FieldSpec, type=st.sampled_from(["string", "integer", "number", "boolean",
                                               "array", "object"]),
              required=st.booleans()),
    st.builds(FieldSpec, type=st.just("string"), required=st.booleans(),
              pattern=st.sampled_from([None, "^a", "b$", r"\d"]),
              enum=st.sampled_from([None, ("a", "b1", "")]),
              min=st.sampled_from([None, 0, 1]), max=st.sampled_from([None, 2, 5])),
    st.builds(FieldSpec, type=st.sampled_from(["integer", "number"]),
              min=st.sampled_from([None, -1, 0.5]), max=st.sampled_from([None, 3, 1e9]),
              default=st.sampled_from([None, 1])),
    st.builds(FieldSpec, type=st.just("array"), min=st.sampled_from([None, 1]),
              default=st.sampled_from([None, ["x"]])),
)
SCHEMAS = st.dictionaries(FIELD_NAMES, FIELD, max_size=4)
SUBMISSIONS = st.one_of(JSON, st.dictionaries(FIELD_NAMES | st.text(max_size=5), JSON,
                                              max_size=6))


@settings(max_examples=300, deadline=None)
@given(SCHEMAS, SUBMISSIONS)
def test_check_gate_never_raises_and_accepts_iff_nothing_is_wrong(
        schema: dict[str, FieldSpec], submitted: Any) -> None:
    check = check_gate(schema, submitted)
    assert check.accepted == (not check.missing and not check.errors)
    assert set(check.data) <= set(schema)
    assert set(check.missing) <= {n for n, s in schema.items() if s.required}
    if isinstance(submitted, dict):
        assert check.dropped == [k for k in submitted if k not in schema]
        for name, value in check.data.items():
            assert value == (submitted.get(name) if submitted.get(name) is not None
                             else schema[name].default)
    else:
        assert len(check.errors) == 1 and check.data == {}


def test_a_pattern_on_a_non_string_field_never_raises() -> None:
    spec = FieldSpec(type="integer", pattern="^1")
    assert check_gate({"n": spec}, {"n": 5}).accepted


# Backtracking engines take time exponential in the input for these (about 2**60 steps for
# 60 characters): minutes to years without a bound.
CATASTROPHIC = [r"^(a|a)*$", r"^(a+)+$", r"^(a|aa)*c$", r"(\w|\w)*!$"]


@pytest.mark.timeout(60)
@pytest.mark.parametrize("pattern", CATASTROPHIC)
def test_a_catastrophic_pattern_is_a_clean_rejection(pattern: str) -> None:
    from canal.spec.patterns import PATTERN_SECONDS

    message = error_of(FieldSpec(pattern=pattern), "a" * 60 + "b")
    assert message in (f"must match {pattern}",
                       f"the pattern {pattern} took more than {PATTERN_SECONDS:g} s to check "
                       "this value; send a shorter or simpler value")


def test_the_bound_is_what_stops_a_catastrophic_pattern() -> None:
    from canal.spec.patterns import PATTERN_SECONDS

    message = error_of(FieldSpec(pattern=r"^(a|a)*$"), "a" * 60 + "b")
    assert message == (f"the pattern ^(a|a)*$ took more than {PATTERN_SECONDS:g} s to check "
                       "this value; send a shorter or simpler value")


# -- a pattern message a person can act on: description, example, then the pattern --------

HOST = r"^[a-z0-9.-]+\.[a-z]{2,}$"


@pytest.mark.parametrize("spec, message", [
    (FieldSpec(desc="Service domain", pattern=HOST, example="billing.example.com"),
     f"Service domain: e.g. billing.example.com; must match {HOST}"),
    (FieldSpec(desc="Service domain", pattern=HOST, default="shop.example.com"),
     f"Service domain: e.g. shop.example.com; must match {HOST}"),
    (FieldSpec(desc="Service domain", pattern=HOST, example="a.example.com",
               default="b.example.com"),
     f"Service domain: e.g. a.example.com; must match {HOST}"),  # the example wins
    (FieldSpec(desc="Service domain", pattern=HOST), f"Service domain: must match {HOST}"),
    (FieldSpec(pattern=HOST, example="billing.example.com"),
     f"e.g. billing.example.com; must match {HOST}"),
    (FieldSpec(pattern=HOST), f"must match {HOST}"),
])
def test_a_pattern_error_leads_with_description_and_example(spec: FieldSpec,
                                                           message: str) -> None:
    assert error_of(spec, "Not A Domain") == message


def test_a_sensitive_field_never_shows_its_default_nor_the_value() -> None:
    secret = FieldSpec(desc="API token", pattern="^tok-", sensitive=True, default="tok-real-1")
    assert error_of(secret, "xyzzy-typed") == "API token: must match ^tok-"
    shown = FieldSpec(desc="API token", pattern="^tok-", sensitive=True, example="tok-1234")
    assert error_of(shown, "xyzzy-typed") == "API token: e.g. tok-1234; must match ^tok-"


def test_the_example_is_shown_to_agents_in_the_gate_and_its_schema() -> None:
    from canal.nodes.gate import json_schema

    spec = FieldSpec(desc="Service domain", pattern=HOST, example="billing.example.com")
    assert spec.to_json()["example"] == "billing.example.com"
    assert "example" not in FieldSpec().to_json()
    assert json_schema({"host": spec})["properties"]["host"]["examples"] == [
        "billing.example.com"]
