"""Static validation: every class of mistake, reported once, with where, what and why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from canal.errors import Problem, WorkflowInvalid
from canal.spec import check_workflow, load_workflow, validate_spec
from tests.conftest import project_steps, write_workflow

NOTE = {"type": "notification"}


def ask(**fields: Any) -> dict[str, Any]:
    """An interactive step's front matter with these gate fields."""
    return {"type": "interactive", "gate": {"schema": fields}}


def call(tool: str = "t", **mapping: Any) -> dict[str, Any]:
    """An automated step's front matter calling ``tool`` with this input mapping."""
    return {"type": "automated", "automation": {"tool": tool, "input_mapping": mapping}}


def problems_of(workflows: Path, steps: dict[str, Any], **kwargs: Any) -> list[Problem]:
    spec, found = check_workflow(write_workflow(workflows, "w", steps, **kwargs))
    assert spec is not None
    return found


def one(workflows: Path, steps: dict[str, Any]) -> Problem:
    found = problems_of(workflows, steps)
    assert len(found) == 1, [str(p) for p in found]
    return found[0]


def test_the_seed_example_is_valid(workflows: Path) -> None:
    spec, found = check_workflow(write_workflow(workflows, "w", project_steps()))
    assert found == []
    assert spec is not None and len(spec.steps) == 4
    assert validate_spec(spec) == []


# --- references --------------------------------------------------------------------------


def test_reference_to_an_unknown_step_lists_the_known_steps(workflows: Path) -> None:
    problem = one(workflows, {
        "01-collect.md": ask(name={"type": "string"}),
        "02-create.md": call(name="{{gate.colect.name}}"),
    })
    assert problem.path == "references/02-create.md"
    assert problem.key == "automation.input_mapping.name"
    assert problem.text == "{{gate.colect.name}}"
    assert str(problem) == ("references/02-create.md: automation.input_mapping.name: "
                            "{{gate.colect.name}}: no step 'colect' (known: collect, create)")


def test_forward_reference(workflows: Path) -> None:
    problem = one(workflows, {
        "01-create.md": call(owner="{{gate.collect.owner}}"),
        "02-collect.md": ask(owner={"type": "string"}),
    })
    assert str(problem) == (
        "references/01-create.md: automation.input_mapping.owner: {{gate.collect.owner}}: "
        "step 'collect' has not run yet at this point (it comes after 'create')")


def test_self_reference(workflows: Path) -> None:
    problem = one(workflows, {"01-create.md": call(again="{{result.create.id}}")})
    assert str(problem) == ("references/01-create.md: automation.input_mapping.again: "
                            "{{result.create.id}}: a step cannot reference itself")


def test_undeclared_gate_field_matches_the_style_example(workflows: Path) -> None:
    problem = one(workflows, {
        "01-collect-project-info.md": ask(project_name={"type": "string", "required": True},
                                          host={"type": "string", "required": True},
                                          admins={"type": "array"}),
        "02-create-project.md": call("create_project",
                                     name="{{gate.collect-project-info.project_name}}",
                                     host="{{gate.collect-project-info.hots}}"),
    })
    text = str(problem)
    assert "references/02-create-project.md" in text
    assert "automation.input_mapping.host" in text
    assert "{{gate.collect-project-info.hots}}" in text
    assert "no such field (known: project_name, host, admins)" in text
    assert text == ("references/02-create-project.md: automation.input_mapping.host: "
                    "{{gate.collect-project-info.hots}}: no such field "
                    "(known: project_name, host, admins)")


def test_gate_field_of_a_step_without_gate_lists_none(workflows: Path) -> None:
    problem = one(workflows, {
        "01-confirm.md": {"type": "interactive"},
        "02-create.md": call(x="{{gate.confirm.ok}}"),
    })
    assert problem.message == "no such field (known: none)"


@pytest.mark.parametrize("kind, front, hint", [
    ("automated", call(), "; use {{result.earlier...}}"),
    ("notification", NOTE, ""),
])
def test_gate_of_a_step_that_is_not_interactive(workflows: Path, kind: str,
                                                front: dict, hint: str) -> None:
    problem = one(workflows, {"01-earlier.md": front,
                              "02-create.md": call(x="{{gate.earlier.id}}")})
    assert str(problem) == (
        "references/02-create.md: automation.input_mapping.x: {{gate.earlier.id}}: "
        f"step 'earlier' is {kind} and has no gate data{hint}")


@pytest.mark.parametrize("kind, front", [
    ("interactive", ask(name={"type": "string"})),
    ("notification", NOTE),
])
def test_result_of_a_step_that_is_not_automated(workflows: Path, kind: str,
                                                front: dict) -> None:
    problem = one(workflows, {"01-earlier.md": front,
                              "02-create.md": call(x="{{result.earlier.name}}")})
    assert str(problem) == (
        "references/02-create.md: automation.input_mapping.x: {{result.earlier.name}}: "
        f"step 'earlier' is {kind} and has no result; only automated steps do")


@pytest.mark.parametrize("text, message", [
    ("{{gate.collect.name", "unclosed '{{' (a reference ends with '}}')"),
    ("{{ }}", "empty reference"),
    ("{{foo.collect.name}}", "unknown namespace 'foo' (use gate or result)"),
    ("{{gate.collect}}", "a gate reference names a field: {{gate.<step>.<field>}}"),
    ("{{gate collect name}}", "not a reference (expected {{gate.<step>.<field>}} or "
                              "{{result.<step>.<path>}})"),
])
def test_malformed_template_syntax(workflows: Path, text: str, message: str) -> None:
    problem = one(workflows, {"01-collect.md": ask(name={"type": "string"}),
                              "02-create.md": call(x=f"hello {text}")})
    assert problem.path == "references/02-create.md"
    assert problem.key == "automation.input_mapping.x"
    assert problem.message == message
    assert problem.text == text


def test_bad_references_in_a_step_body_are_reported(workflows: Path) -> None:
    found = problems_of(workflows, {
        "01-collect.md": (ask(name={"type": "string"}), "Hello {{gate.collect.name}}."),
        "02-create.md": call(name="{{gate.collect.name}}"),
        "03-done.md": (NOTE, "Created {{result.create.id}} for {{gate.collect.nme}}; "
                             "next {{result.later.id}}; broken {{gate.collect}}."),
        "04-later.md": call(),
    })
    assert [str(p) for p in found] == [
        "references/01-collect.md: body: {{gate.collect.name}}: "
        "a step cannot reference itself",
        "references/03-done.md: body: {{gate.collect.nme}}: no such field (known: name)",
        "references/03-done.md: body: {{result.later.id}}: "
        "step 'later' has not run yet at this point (it comes after 'done')",
        "references/03-done.md: body: {{gate.collect}}: "
        "a gate reference names a field: {{gate.<step>.<field>}}",
    ]


def test_nested_input_mapping_values_are_checked(workflows: Path) -> None:
    found = problems_of(workflows, {
        "01-collect.md": ask(name={"type": "string"}),
        "02-create.md": call(outer={"inner": ["{{gate.collect.nmae}}", "ok {{gate.collect.name}}"],
                                    "deep": {"list": [{"x": "{{result.nowhere.id}}"}]}},
                             flat=["{{gate.collect.name}}", 3, None]),
    })
    assert [(p.key, p.text) for p in found] == [
        ("automation.input_mapping.outer.inner[0]", "{{gate.collect.nmae}}"),
        ("automation.input_mapping.outer.deep.list[0].x", "{{result.nowhere.id}}"),
    ]
    assert str(found[0]) == ("references/02-create.md: automation.input_mapping.outer.inner[0]: "
                             "{{gate.collect.nmae}}: no such field (known: name)")


def test_reference_to_a_step_that_failed_to_parse_is_not_reported_again(
        workflows: Path) -> None:
    found = problems_of(workflows, {
        "01-collect.md": ask(name={"type": "string"}),
        "02-create.md": {"type": "automated", "automation": {"tool": "t"}, "retries": 3},
        "03-role.md": call(project="{{result.create.id}}", name="{{gate.collect.name}}"),
        "04-broken.md": "---\ntype: [automated\n---\n",
        "05-done.md": (NOTE, "{{result.broken.x}} {{result.create.id}} {{result.gone.id}}"),
    })
    assert [str(p) for p in found] == [
        "references/02-create.md: retries: unknown key",
        "references/04-broken.md:3: YAML error: expected ',' or ']', but got '<stream end>'",
        "references/05-done.md: body: {{result.gone.id}}: "
        "no step 'gone' (known: collect, role, done)",
    ]


def test_reference_to_a_renamed_step_that_failed_to_parse_is_not_reported_again(
        workflows: Path) -> None:
    found = problems_of(workflows, {
        "01-create.md": {"type": "automated", "id": "make", "automation": {"tool": "t"},
                         "retries": 3},
        "02-done.md": (NOTE, "Made {{result.make.id}}."),
    })
    assert [str(p) for p in found] == ["references/01-create.md: retries: unknown key"]


# --- step shape --------------------------------------------------------------------------


def test_duplicate_step_ids(workflows: Path) -> None:
    problem = one(workflows, {"01-hello.md": NOTE,
                              "02-other.md": {"type": "notification", "id": "hello"}})
    assert str(problem) == "references/02-other.md: id: hello: step id is also used by " \
                           "references/01-hello.md"


def test_duplicate_order_prefixes(workflows: Path) -> None:
    found = problems_of(workflows, {"01-a.md": NOTE, "001-b.md": NOTE})
    assert [str(p) for p in found] == [
        "references/01-a.md: order prefix 1 is also used by references/001-b.md"]
    with pytest.raises(WorkflowInvalid) as info:
        load_workflow(workflows / "w")
    assert info.value.problems == found


@pytest.mark.parametrize("filename, front, expected", [
    ("01-say hello.md", NOTE, "references/01-say hello.md: say hello: a step id is letters, "
                              "digits, '_' and '-' (it is used in {{...}} references)"),
    ("01-hello.md", {"type": "notification", "id": "say.hello"},
     "references/01-hello.md: id: say.hello: a step id is letters, digits, '_' and '-' "
     "(it is used in {{...}} references)"),
])
def test_step_ids_must_fit_the_reference_grammar(workflows: Path, filename: str,
                                                 front: dict, expected: str) -> None:
    assert str(one(workflows, {filename: front})) == expected


def test_interactive_step_without_gate_is_a_plain_confirmation(workflows: Path) -> None:
    spec = load_workflow(write_workflow(workflows, "w", {
        "01-confirm.md": ({"type": "interactive"}, "Type OK to go on.")}))
    assert spec.steps[0].gate == {}
    assert spec.steps[0].type == "interactive"


@pytest.mark.parametrize("front, key, message", [
    ({"type": "automated"}, "automation",
     "an automated step needs 'automation: {tool: ...}'"),
    ({**call(), "gate": {"schema": {"x": {"type": "string"}}}}, "gate",
     "only interactive steps have a gate"),
    ({"type": "notification", "gate": {"schema": {"x": {"type": "string"}}}}, "gate",
     "a notification takes no data; use type: interactive"),
    ({"type": "interactive", "automation": {"tool": "t"}}, "automation",
     "a interactive step does not call tools; use type: automated"),
    ({"type": "notification", "automation": {"tool": "t"}}, "automation",
     "a notification step does not call tools; use type: automated"),
])
def test_step_shape(workflows: Path, front: dict, key: str, message: str) -> None:
    problem = one(workflows, {"01-step.md": front})
    assert str(problem) == f"references/01-step.md: {key}: {message}"


def test_automated_step_with_automation_but_no_tool(workflows: Path) -> None:
    with pytest.raises(WorkflowInvalid) as info:
        load_workflow(write_workflow(workflows, "w", {
            "01-step.md": {"type": "automated", "automation": {"input_mapping": {"a": 1}}}}))
    assert [str(p) for p in info.value.problems] == [
        "references/01-step.md: automation.tool: required key is missing"]


def test_unknown_step_type(workflows: Path) -> None:
    with pytest.raises(WorkflowInvalid) as info:
        load_workflow(write_workflow(workflows, "w", {"01-step.md": {"type": "approval"}}))
    assert [str(p) for p in info.value.problems] == [
        "references/01-step.md: type: 'approval': not a known type "
        "(known: interactive, automated, notification)"]


# --- gate fields -------------------------------------------------------------------------


@pytest.mark.parametrize("field, key, text, message", [
    ({"type": "integer", "default": "3"}, "default", "'3'", "default is not of type integer"),
    ({"type": "integer", "default": 2.5}, "default", "2.5", "default is not of type integer"),
    ({"type": "integer", "default": True}, "default", "True", "default is not of type integer"),
    ({"type": "boolean", "default": 1}, "default", "1", "default is not of type boolean"),
    ({"type": "string", "default": 7}, "default", "7", "default is not of type string"),
    ({"type": "array", "default": "root"}, "default", "'root'", "default is not of type array"),
    ({"type": "object", "default": []}, "default", "[]", "default is not of type object"),
    ({"type": "string", "enum": ["a", 2]}, "enum", "2", "enum value is not of type string"),
    ({"type": "number", "enum": [1, True]}, "enum", "True", "enum value is not of type number"),
    ({"type": "string", "enum": ["a", "b"], "default": "c"}, "default", "'c'",
     "default is not one of the enum values"),
    ({"type": "string", "required": True, "default": "x"}, "default", None,
     "a required field cannot have a default (make it optional)"),
    ({"type": "integer", "min": 5, "max": 1}, "min", None, "min is greater than max"),
    ({"type": "integer", "pattern": "^1"}, "pattern", None, "pattern applies to strings only"),
    ({"type": "boolean", "max": 1}, None, None, "min/max do not apply to boolean"),
    ({"type": "integer", "required": True, "allow_empty": True}, "allow_empty", None,
     "allow_empty applies to strings only (only text can be empty)"),
])
def test_field_problems(workflows: Path, field: dict, key: str | None, text: str | None,
                        message: str) -> None:
    problem = one(workflows, {"01-ask.md": ask(f=field)})
    assert problem.path == "references/01-ask.md"
    assert problem.key == "gate.schema.f" + (f".{key}" if key else "")
    assert problem.text == text
    assert problem.message == message


@pytest.mark.parametrize("field, text, message", [
    ({"type": "integer", "example": "3"}, "'3'", "example is not of type integer"),
    ({"type": "string", "example": True}, "True", "example is not of type string"),
    ({"type": "string", "pattern": "^[a-z]+$", "example": "Billing"}, "'Billing'",
     "example does not match the pattern ^[a-z]+$"),
    ({"type": "string", "enum": ["a", "b"], "example": "c"}, "'c'",
     "example is not one of the enum values"),
    ({"type": "integer", "min": 1, "max": 9, "example": 10}, "10",
     "example is outside the field's min/max"),
    ({"type": "string", "min": 3, "example": "ab"}, "'ab'", "example is outside the field's min/max"),
    ({"type": "array", "max": 1, "example": [1, 2]}, "[1, 2]",
     "example is outside the field's min/max"),
])
def test_an_example_must_pass_its_own_field(workflows: Path, field: dict, text: str,
                                            message: str) -> None:
    problem = one(workflows, {"01-ask.md": ask(f=field)})
    assert (problem.key, problem.text, problem.message) == ("gate.schema.f.example", text,
                                                            message)


def test_an_example_is_not_checked_against_a_pattern_that_does_not_compile(
        workflows: Path) -> None:
    found = problems_of(workflows, {"01-ask.md": ask(
        f={"type": "string", "pattern": "[a-z", "example": "x"})})
    assert [p.key for p in found] == ["gate.schema.f.pattern"]


def test_allow_empty_on_a_string_is_valid(workflows: Path) -> None:
    steps = {"01-ask.md": ask(note={"type": "string", "required": True, "allow_empty": True})}
    assert problems_of(workflows, steps) == []


def test_pattern_that_does_not_compile(workflows: Path) -> None:
    problem = one(workflows, {"01-ask.md": ask(code={"type": "string", "pattern": "[a-z"})})
    assert problem.key == "gate.schema.code.pattern"
    assert problem.text == "[a-z"
    assert problem.message.startswith("not a regular expression: ")
    assert "unterminated character set" in problem.message


def test_field_name_must_be_an_identifier(workflows: Path) -> None:
    problem = one(workflows, {"01-ask.md": ask(**{"first name": {"type": "string"}})})
    assert str(problem) == ("references/01-ask.md: gate.schema.first name: field names are "
                            "letters, digits, '_' and '-'")


@pytest.mark.parametrize("field", [
    {"type": "number", "default": 3},  # an integer is a number
    {"type": "number", "enum": [1, 2.5], "default": 2.5},
    {"type": "integer", "enum": [1, 2], "default": 2, "min": 1, "max": 2},
    {"type": "string", "min": 2, "max": 2, "pattern": "^[a-z]+$"},
    {"type": "array", "default": ["root"], "max": 3},
    {"type": "object", "default": {"a": 1}},
    {"type": "boolean", "default": False},
    {"type": "string", "required": True},
    {"type": "string", "required": True, "pattern": "^[a-z]+$", "example": "billing",
     "min": 3, "max": 10},
    {"type": "integer", "enum": [1, 2], "example": 2, "sensitive": True},
])
def test_consistent_fields_are_valid(workflows: Path, field: dict) -> None:
    assert problems_of(workflows, {"01-ask.md": ask(f=field)}) == []


# --- collecting --------------------------------------------------------------------------


def test_five_mistakes_in_five_files_give_exactly_five_problems(workflows: Path) -> None:
    found = problems_of(workflows, {
        "01-collect.md": ask(name={"type": "string", "required": True},
                             code={"type": "string", "pattern": "(unclosed"}),
        "02-create.md": call("create", name="{{gate.collect.nmae}}"),
        "03-role.md": call("role", project="{{result.create.id}}", owner="{{gate.collect.name}}",
                           later="{{result.notify.id}}"),
        "04-notify.md": ({"type": "notification", "gate": {"schema": {"x": {}}}},
                         "Created {{result.create.id}}."),
        "05-extra.md": (NOTE, "Role {{result.role.id}} for {{gate.collect.name}}."),
    }, entry={"name": "elsewhere", "description": "x"})
    texts = [str(p) for p in found]
    expected = [
        "WorkFlow.md: name: elsewhere: does not match the folder name 'w'",
        "references/01-collect.md: gate.schema.code.pattern: (unclosed: "
        "not a regular expression: ",
        "references/02-create.md: automation.input_mapping.name: {{gate.collect.nmae}}: "
        "no such field (known: name, code)",
        "references/03-role.md: automation.input_mapping.later: {{result.notify.id}}: "
        "step 'notify' has not run yet at this point (it comes after 'role')",
        "references/04-notify.md: gate: a notification takes no data; use type: interactive",
    ]
    assert len(found) == 5, texts
    for start in expected:
        assert sum(t.startswith(start) for t in texts) == 1, (start, texts)
    assert not any("05-extra.md" in t for t in texts)


def test_five_mistakes_including_a_parse_error(workflows: Path) -> None:
    found = problems_of(workflows, {
        "01-collect.md": ask(n={"type": "integer", "default": "x"}),
        "02-create.md": call(n="{{gate.collect.m}}"),
        "03-role.md": {"type": "automated"},
        "04-notify.md": (NOTE, "Done {{result.broken.id}} {{foo.a.b}}"),
        "05-broken.md": {"type": "notification", "colour": "red"},
    })
    texts = sorted(str(p) for p in found)
    assert texts == sorted([
        "references/01-collect.md: gate.schema.n.default: 'x': default is not of type integer",
        "references/02-create.md: automation.input_mapping.n: {{gate.collect.m}}: "
        "no such field (known: n)",
        "references/03-role.md: automation: an automated step needs 'automation: {tool: ...}'",
        "references/04-notify.md: body: {{foo.a.b}}: unknown namespace 'foo' (use gate or result)",
        "references/05-broken.md: colour: unknown key",
    ])


def test_load_workflow_reports_every_problem(workflows: Path) -> None:
    with pytest.raises(WorkflowInvalid) as info:
        load_workflow(write_workflow(workflows, "w", {
            "01-a.md": {"type": "automated"},
            "02-b.md": (NOTE, "{{gate.a.x}}"),
        }))
    assert info.value.message == "workflow 'w' has 2 problems"
    assert [str(p) for p in info.value.problems] == [
        "references/01-a.md: automation: an automated step needs 'automation: {tool: ...}'",
        "references/02-b.md: body: {{gate.a.x}}: step 'a' is automated and has no gate data; "
        "use {{result.a...}}",
    ]
