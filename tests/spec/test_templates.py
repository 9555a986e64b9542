"""The reference language: scanning, typed and interpolated rendering, lookups, no injection."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from canal.errors import TemplateError
from canal.spec.templates import (
    MISSING,
    Malformed,
    Reference,
    render,
    render_lenient,
    resolve,
    scan,
    state_lookup,
)

GATE = {
    "collect": {"name": "Apollo", "count": 3, "ok": True, "off": False,
                "tags": ["a", "b"], "meta": {"k": "v", "n": [1, 2]}, "nothing": None,
                "ratio": 0.5, "unicode": "héllo", "sneaky": "{{result.create.project.id}}"},
    "empty": {},
}
RESULT = {
    "create": {"project": {"id": 42, "name": "apollo", "admins": ["root", "ops"],
                           "owner": {"email": "a@b.c"}},
               "items": [{"id": "i0"}, {"id": "i1"}], "flag": False, "none": None,
               "text": "{{gate.collect.name}}"},
    "ping": "pong",
    "skipped": None,
}
LOOKUP = state_lookup(GATE, RESULT)


# --- scan --------------------------------------------------------------------------------


def test_scan_finds_references_with_positions_and_paths() -> None:
    text = "a {{gate.collect.name}} b {{ result.create.items[1].id }} c {{result.ping}}"
    parts = list(scan(text))
    assert parts == [
        Reference("{{gate.collect.name}}", "gate", "collect", ("name",), 2, 23),
        Reference("{{ result.create.items[1].id }}", "result", "create", ("items", 1, "id"),
                  26, 57),
        Reference("{{result.ping}}", "result", "ping", (), 60, 75),
    ]
    for part in parts:
        assert text[part.start:part.end] == part.text


def test_scan_keeps_dotted_digits_as_text_segments() -> None:
    (ref,) = scan("{{result.s.items.1.id}}")
    assert ref.path == ("items", "1", "id")


def test_scan_of_plain_text_finds_nothing() -> None:
    assert list(scan("no references { here } at all")) == []


@pytest.mark.parametrize("text, raw, message", [
    ("x {{gate.a.b", "{{gate.a.b", "unclosed '{{' (a reference ends with '}}')"),
    ("{{}}", "{{}}", "empty reference"),
    ("{{   }}", "{{   }}", "empty reference"),
    ("{{foo.a.b}}", "{{foo.a.b}}", "unknown namespace 'foo' (use gate or result)"),
    ("{{gate.step}}", "{{gate.step}}", "a gate reference names a field: "
                                       "{{gate.<step>.<field>}}"),
    ("{{gate}}", "{{gate}}", "not a reference (expected {{gate.<step>.<field>}} or "
                             "{{result.<step>.<path>}})"),
    ("{{result.s.a b}}", "{{result.s.a b}}", "not a reference (expected "
                                             "{{gate.<step>.<field>}} or "
                                             "{{result.<step>.<path>}})"),
])
def test_scan_reports_malformed_references(text: str, raw: str, message: str) -> None:
    assert list(scan(text)) == [Malformed(raw, message)]


def test_scan_reports_a_nested_opening_and_still_finds_the_inner_reference() -> None:
    parts = list(scan("{{oops {{gate.a.b}}"))
    assert parts[0] == Malformed("{{oops {{gate.a.b}}", "nested '{{' inside a reference")
    assert isinstance(parts[1], Reference) and parts[1].text == "{{gate.a.b}}"


# --- typed rendering ---------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("{{gate.collect.count}}", 3),
    ("{{gate.collect.ok}}", True),
    ("{{gate.collect.off}}", False),
    ("{{gate.collect.ratio}}", 0.5),
    ("{{gate.collect.tags}}", ["a", "b"]),
    ("{{gate.collect.meta}}", {"k": "v", "n": [1, 2]}),
    ("{{gate.collect.nothing}}", None),
    ("{{result.create.none}}", None),
    ("{{result.create.flag}}", False),
    ("{{gate.collect.name}}", "Apollo"),
    ("  {{gate.collect.count}}\n", 3),
    ("\t{{ gate.collect.tags }} ", ["a", "b"]),
])
def test_exact_single_reference_keeps_its_json_type(text: str, expected: Any) -> None:
    value = render(text, LOOKUP)
    assert value == expected
    assert type(value) is type(expected)


@pytest.mark.parametrize("text, expected", [
    ("{{result.create.project.id}}", 42),
    ("{{result.create.project.owner.email}}", "a@b.c"),
    ("{{result.create.items[1].id}}", "i1"),
    ("{{result.create.items.1.id}}", "i1"),
    ("{{result.create.project.admins[0]}}", "root"),
    ("{{result.create.project.admins.1}}", "ops"),
    ("{{result.create.items[0]}}", {"id": "i0"}),
    ("{{result.ping}}", "pong"),
    ("{{result.create.project}}", RESULT["create"]["project"]),
])
def test_result_paths_go_into_objects_and_lists(text: str, expected: Any) -> None:
    assert render(text, LOOKUP) == expected


# --- interpolation -----------------------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("name={{gate.collect.name}}", "name=Apollo"),
    ("{{gate.collect.count}} items", "3 items"),
    ("ok={{gate.collect.ok}}/{{gate.collect.off}}", "ok=true/false"),
    ("r={{gate.collect.ratio}}", "r=0.5"),
    ("tags={{gate.collect.tags}}", 'tags=["a","b"]'),
    ("meta={{gate.collect.meta}}", 'meta={"k":"v","n":[1,2]}'),
    ("u={{gate.collect.unicode}} {{result.create.project.owner}}",
     'u=héllo {"email":"a@b.c"}'),
    ("role of {{result.create.project.name}} ({{result.create.project.id}})",
     "role of apollo (42)"),
    ("{{gate.collect.name}}{{gate.collect.count}}", "Apollo3"),
    ("{{gate.collect.count}} ", 3),  # trailing blank only: still exactly one reference
])
def test_references_inside_longer_text_are_interpolated(text: str, expected: Any) -> None:
    assert render(text, LOOKUP) == expected


def test_text_without_references_is_returned_unchanged() -> None:
    assert render("plain {text} }} here", LOOKUP) == "plain {text} }} here"


def test_render_rejects_malformed_text() -> None:
    with pytest.raises(TemplateError, match=r"^\{\{foo\.a\.b\}\}: unknown namespace 'foo'"):
        render("x {{foo.a.b}}", LOOKUP)
    with pytest.raises(TemplateError, match=r"unclosed '\{\{'"):
        render("{{gate.collect.name}} and {{gate.collect", LOOKUP)


# --- missing values ----------------------------------------------------------------------


def test_missing_optional_gate_field_is_missing() -> None:
    assert render("{{gate.collect.absent}}", LOOKUP) is MISSING
    assert render("{{gate.empty.anything}}", LOOKUP) is MISSING
    assert repr(MISSING) == "MISSING"


def test_missing_gate_field_interpolates_as_empty_text() -> None:
    assert render("[{{gate.collect.absent}}]", LOOKUP) == "[]"


def test_missing_gate_field_is_left_out_of_a_resolved_mapping() -> None:
    mapping = {"name": "{{gate.collect.name}}", "absent": "{{gate.collect.absent}}",
               "nested": {"gone": "{{gate.empty.x}}", "kept": "{{gate.collect.count}}"},
               "listed": ["{{gate.collect.absent}}", "{{gate.collect.ok}}"],
               "text": "<{{gate.collect.absent}}>"}
    assert resolve(mapping, LOOKUP) == {
        "name": "Apollo", "nested": {"kept": 3}, "listed": [None, True], "text": "<>"}


def test_gate_of_a_step_without_gate_data_is_an_error() -> None:
    with pytest.raises(TemplateError) as info:
        render("{{gate.nobody.x}}", LOOKUP)
    assert info.value.message == "{{gate.nobody.x}}: step 'nobody' has no gate data"


@pytest.mark.parametrize("text, where", [
    ("{{result.create.project.missing}}", "project.missing"),
    ("{{result.create.items[5].id}}", "items.5"),
    ("{{result.create.items.7}}", "items.7"),
    ("{{result.create.project.id.deeper}}", "project.id.deeper"),
    ("{{result.create.none.x}}", "none.x"),
    ("{{result.create.nope}}", "nope"),
    ("{{result.skipped.id}}", "id"),
    ("see {{result.create.project.owner.phone}}", "project.owner.phone"),
])
def test_missing_result_path_raises_naming_the_path(text: str, where: str) -> None:
    with pytest.raises(TemplateError) as info:
        render(text, LOOKUP)
    ref = next(scan(text))
    assert info.value.message == f"{ref.text}: result of '{ref.step}' has no {where!r}"


def test_gate_path_below_a_field_that_is_not_there_raises() -> None:
    with pytest.raises(TemplateError, match=r"gate of 'collect' has no 'meta\.zz'"):
        render("{{gate.collect.meta.zz}}", LOOKUP)


def test_result_of_a_step_with_no_result_raises() -> None:
    with pytest.raises(TemplateError) as info:
        render("id={{result.later.id}}", LOOKUP)
    assert info.value.message == "{{result.later.id}}: step 'later' has no result"
    assert info.value.code == "template_error"


def test_list_index_into_a_string_is_not_a_path() -> None:
    with pytest.raises(TemplateError):
        render("{{result.create.project.name[0]}}", LOOKUP)


# --- no re-expansion ---------------------------------------------------------------------


def test_template_looking_data_is_passed_on_verbatim_typed() -> None:
    assert render("{{gate.collect.sneaky}}", LOOKUP) == "{{result.create.project.id}}"
    assert render("{{result.create.text}}", LOOKUP) == "{{gate.collect.name}}"


def test_template_looking_data_is_passed_on_verbatim_interpolated() -> None:
    assert render("id: {{gate.collect.sneaky}}!", LOOKUP) == "id: {{result.create.project.id}}!"
    assert render_lenient("say {{result.create.text}}", LOOKUP) == "say {{gate.collect.name}}"


def test_template_looking_data_inside_a_mapping_is_not_re_expanded() -> None:
    data = {"a": "{{gate.collect.sneaky}}", "b": ["x {{result.create.text}}"]}
    assert resolve(data, LOOKUP) == {"a": "{{result.create.project.id}}",
                                     "b": ["x {{gate.collect.name}}"]}


def test_template_looking_data_that_would_fail_is_not_evaluated() -> None:
    lookup = state_lookup({"s": {"f": "{{result.nowhere.x}} {{bad"}}, {})
    assert render("{{gate.s.f}}", lookup) == "{{result.nowhere.x}} {{bad"
    assert render("<{{gate.s.f}}>", lookup) == "<{{result.nowhere.x}} {{bad>"


# --- resolve -----------------------------------------------------------------------------


def test_resolve_walks_nested_dicts_and_lists() -> None:
    mapping = {
        "project_id": "{{result.create.project.id}}",
        "owner": {"email": "{{result.create.project.owner.email}}",
                  "roles": ["admin", "{{gate.collect.name}}-{{gate.collect.count}}"]},
        "ids": ["{{result.create.items[0].id}}", "{{result.create.items.1.id}}"],
        "matrix": [[{"n": "{{gate.collect.count}}"}]],
        "number": 7, "flag": True, "none": None, "tuple": ("{{gate.collect.ok}}",),
    }
    assert resolve(mapping, LOOKUP) == {
        "project_id": 42,
        "owner": {"email": "a@b.c", "roles": ["admin", "Apollo-3"]},
        "ids": ["i0", "i1"],
        "matrix": [[{"n": 3}]],
        "number": 7, "flag": True, "none": None, "tuple": [True],
    }


def test_resolve_does_not_change_its_input() -> None:
    mapping = {"a": ["{{gate.collect.count}}"], "b": {"c": "{{gate.collect.absent}}"}}
    resolve(mapping, LOOKUP)
    assert mapping == {"a": ["{{gate.collect.count}}"], "b": {"c": "{{gate.collect.absent}}"}}


def test_resolve_raises_on_a_bad_nested_reference() -> None:
    with pytest.raises(TemplateError, match="has no 'project.nope'"):
        resolve({"outer": [{"x": "{{result.create.project.nope}}"}]}, LOOKUP)


# --- render_lenient ----------------------------------------------------------------------


def test_render_lenient_renders_what_resolves() -> None:
    text = ("Project {{result.create.project.id}} ({{gate.collect.name}}, "
            "{{gate.collect.tags}}) has role {{result.role.role_id}}.")
    assert render_lenient(text, LOOKUP) == 'Project 42 (Apollo, ["a","b"]) has role .'


@pytest.mark.parametrize("text, expected", [
    ("a {{result.nowhere.x}} b", "a  b"),
    ("a {{result.create.project.nope}} b", "a  b"),
    ("a {{gate.nobody.x}} b", "a  b"),
    ("a {{gate.collect.absent}} b", "a  b"),
    ("a {{gate.collect.nothing}} b", "a  b"),
    ("a {{foo.x.y}} b", "a {{foo.x.y}} b"),
    ("a {{gate.collect.name", "a {{gate.collect.name"),
    ("{{ }} {{gate.collect.count}}", "{{ }} 3"),
    ("{{gate.collect.count}}", "3"),  # always text, even for one typed reference
])
def test_render_lenient_never_raises(text: str, expected: str) -> None:
    assert render_lenient(text, LOOKUP) == expected


TEMPLATE_TEXT = st.text(
    alphabet=st.sampled_from(list("{}. []0123456789_-abcgatersultpinomjkzé\n")), max_size=60)
PIECES = st.lists(st.one_of(
    TEMPLATE_TEXT,
    st.sampled_from(["{{gate.collect.name}}", "{{result.create.items[1].id}}",
                     "{{result.nowhere.x}}", "{{gate.collect.", "}}", "{{", "{{result.ping}}",
                     "{{gate.collect.meta.n[9]}}", "{{result.create.project.name.0}}"]),
), max_size=6).map("".join)


@given(PIECES)
def test_render_lenient_never_raises_for_any_text(text: str) -> None:
    out = render_lenient(text, LOOKUP)
    assert isinstance(out, str)
    if "{{" not in text:
        assert out == text


@pytest.mark.parametrize("digit", ["١", "１", "²"])  # Arabic-Indic, fullwidth, superscript
def test_only_ascii_digits_index_a_list(digit: str) -> None:
    assert [type(p) for p in scan(f"{{{{result.create.items[{digit}]}}}}")] == [Malformed]
    with pytest.raises(TemplateError):
        render(f"{{{{result.create.items.{digit}.id}}}}", LOOKUP)
