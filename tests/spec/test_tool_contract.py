"""``canal.spec.tool_contract``: every call must work with the tool it names. Each rule has a
failing and a passing case; the tools' facts come from a small catalog written here."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from canal.spec import load_workflow
from canal.spec.tool_contract import contract_problems
from tests.conftest import schema, write_workflow

INPUTS = {
    "create_ticket": schema("title", "priority", title="string",
                            priority={"type": "integer", "enum": [0, 1, 2, 3]},
                            size="number", request_id="string",
                            tags={"type": "array", "items": {"enum": ["a", "b"]}}),
    "get_ticket": schema("id", id="integer"),
    "open_tool": {**schema("x", x="string"), "additionalProperties": True},
    "anything": {"type": "object"},
}
OUTPUTS: dict[str, Mapping[str, Any]] = {
    "create_ticket": {"type": "object", "properties": {
        "id": {"type": "integer"},
        "owner": {"type": "object", "properties": {"name": {"type": "string"}}},
        "labels": {"type": "array", "items": {"type": "object",
                                              "properties": {"text": {"type": "string"}}}},
        "extra": {"type": "object", "additionalProperties": True}}},
}


class Catalog:
    """What a tool cache would answer (``known``: None means no cache)."""

    def __init__(self, known: list[str] | None = None) -> None:
        self.known = sorted(INPUTS) if known is None else known

    def known_tools(self) -> list[str] | None:
        return self.known

    def input_schema(self, tool: str) -> Mapping[str, Any] | None:
        return INPUTS.get(tool)

    def output_schema(self, tool: str) -> Mapping[str, Any] | None:
        return OUTPUTS.get(tool)


class NoCache(Catalog):
    def known_tools(self) -> list[str] | None:
        return None


GATE = {"title": {"type": "string"}, "priority": {"type": "integer"},
        "flag": {"type": "boolean"}, "amount": {"type": "number"}}


def problems(workflows: Path, mapping: dict[str, Any], tool: str = "create_ticket",
             catalog: Catalog | None = None, later: dict[str, Any] | None = None,
             **automation: Any) -> list[str]:
    steps: dict[str, Any] = {
        "01-ask.md": {"type": "interactive", "gate": {"schema": GATE}},
        "02-call.md": {"type": "automated", "automation": {
            "tool": tool, "input_mapping": mapping, **automation}},
    }
    if later is not None:
        steps["03-later.md"] = later
    spec = load_workflow(write_workflow(workflows, "w", steps))
    found = contract_problems(spec, catalog or Catalog())
    assert not any(p.warning for p in found)
    return [f"{p.path}: {p.key}: {p.message}" for p in found]


FULL = {"title": "{{gate.ask.title}}", "priority": "{{gate.ask.priority}}"}


def test_a_tool_must_be_known_and_close_names_are_suggested(workflows: Path) -> None:
    assert problems(workflows, FULL, tool="create_tickets") == [
        "references/02-call.md: automation.tool: no tool 'create_tickets' in the tool cache "
        "or canal.yaml's Python tools: did you mean create_ticket or get_ticket? fix the "
        "name, or run 'canal discover' if its server offers it now"]
    assert problems(workflows, FULL) == []


def test_names_are_judged_only_when_a_tool_cache_exists(workflows: Path) -> None:
    assert problems(workflows, FULL, tool="whatever", catalog=NoCache()) == []


def test_verify_and_compensate_tools_are_judged_too(workflows: Path) -> None:
    later = {"type": "automated",
             "automation": {"tool": "create_ticket", "input_mapping": FULL},
             "verify": {"tool": "get_tickt", "input_mapping": {"id": "{{result.later.id}}"},
                        "expect": {"id": "{{result.later.id}}"}},
             "compensate": {"tool": "get_ticket", "input_mapping": {}}}
    assert problems(workflows, FULL, later=later) == [
        "references/03-later.md: verify.tool: no tool 'get_tickt' in the tool cache or "
        "canal.yaml's Python tools: did you mean get_ticket or create_ticket? fix the name, "
        "or run 'canal discover' if its server offers it now",
        "references/03-later.md: compensate.input_mapping.id: get_ticket requires argument "
        "id, which the step does not map: add id: ... to compensate.input_mapping"]


def test_every_required_argument_is_mapped(workflows: Path) -> None:
    assert problems(workflows, {"title": "{{gate.ask.title}}"}) == [
        "references/02-call.md: automation.input_mapping.priority: create_ticket requires "
        "argument priority, which the step does not map: add priority: ... to "
        "automation.input_mapping"]


def test_the_idempotency_key_argument_counts_as_mapped(workflows: Path) -> None:
    INPUTS["keyed"] = schema("request_id", request_id="string")
    try:
        assert problems(workflows, {}, tool="keyed", catalog=Catalog(sorted(INPUTS)),
                        idempotency_key="request_id") == []
        assert len(problems(workflows, {}, tool="keyed",
                            catalog=Catalog(sorted(INPUTS)))) == 1
    finally:
        del INPUTS["keyed"]


def test_an_undeclared_argument_is_an_error(workflows: Path) -> None:
    assert problems(workflows, {**FULL, "titel": "x"}) == [
        "references/02-call.md: automation.input_mapping.titel: create_ticket takes no "
        "argument titel (its arguments: title, priority, size, request_id, tags; an IGNORE "
        "rule hides one too), so canal would drop it from the call: did you mean title? "
        "rename or remove it"]
    # a schema that allows additional properties, or one that declares nothing
    assert problems(workflows, {"x": "a", "more": 1}, tool="open_tool") == []
    assert problems(workflows, {"more": 1}, tool="anything") == []


def test_a_constant_must_fit_the_type_and_enum(workflows: Path) -> None:
    assert problems(workflows, {"title": 5, "priority": 7, "tags": ["a", "c"]}) == [
        "references/02-call.md: automation.input_mapping.title: create_ticket takes title "
        "as string, but the mapping gives the constant integer: map a value of type string",
        "references/02-call.md: automation.input_mapping.priority: create_ticket accepts "
        "only [0, 1, 2, 3] as priority; 7 is not one of them: use one of those values",
        "references/02-call.md: automation.input_mapping.tags: create_ticket accepts only "
        '["a", "b"] in tags; "c" is not one of them: use one of those values']
    assert problems(workflows, {"title": "t", "priority": 2, "tags": ["a"],
                                "size": 3, "request_id": None}) == []


def test_text_with_a_reference_inside_is_a_string(workflows: Path) -> None:
    assert problems(workflows, {"title": "T", "priority": "P{{gate.ask.priority}}"}) == [
        "references/02-call.md: automation.input_mapping.priority: create_ticket takes "
        "priority as integer, but the mapping gives text with a reference inside: map a "
        "value of type integer"]
    assert problems(workflows, {"title": "#{{gate.ask.priority}}", "priority": 1}) == []


def test_a_gate_field_of_a_type_that_never_fits_is_an_error(workflows: Path) -> None:
    assert problems(workflows, {"title": "t", "priority": "{{gate.ask.flag}}"}) == [
        "references/02-call.md: automation.input_mapping.priority: create_ticket takes "
        "priority as integer, but gate field flag is boolean, which never fits: set type: "
        "integer on gate field flag, or map another value"]
    # an integer fits a number; a number may hold an integer (tool_checks warns)
    assert problems(workflows, {**FULL, "size": "{{gate.ask.priority}}"}) == []
    assert problems(workflows, {"title": "t", "priority": "{{gate.ask.amount}}"}) == []


def test_a_result_path_follows_the_tools_output_schema(workflows: Path) -> None:
    bad = {"type": "notification"}
    body = ("{{result.call.owner.nmae}} {{result.call.labels.text}} {{result.call.idd}}")
    found = problems(workflows, FULL, later=(bad, body))
    assert found == [
        "references/03-later.md: body: create_ticket's output schema has no nmae at owner "
        "(it has: name): follow the schema",
        "references/03-later.md: body: create_ticket's output schema has a list at labels, "
        "not an object with text: index it (labels[0]...)",
        "references/03-later.md: body: create_ticket's output schema has no idd (it has: "
        "id, owner, labels, extra): follow the schema"]
    good = ("{{result.call.owner.name}} {{result.call.labels[0].text}} {{result.call.id}} "
            "{{result.call.extra.anything.deeper}} {{result.call}}")
    assert problems(workflows, FULL, later=(bad, good)) == []


def test_a_result_path_in_a_mapping_is_checked_where_it_is_used(workflows: Path) -> None:
    later = {"type": "automated", "automation": {
        "tool": "get_ticket", "input_mapping": {"id": "{{result.call.ticket_id}}"}}}
    assert problems(workflows, FULL, later=later) == [
        "references/03-later.md: automation.input_mapping.id: create_ticket's output schema "
        "has no ticket_id (it has: id, owner, labels, extra): follow the schema"]
    later["automation"]["input_mapping"] = {"id": "{{result.call.id}}"}
    assert problems(workflows, FULL, later=later) == []
