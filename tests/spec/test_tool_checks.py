"""``canal.spec.tool_checks``: a gate field that feeds a tool argument unchanged should
enforce the argument's enum and type; the tools' schemas come from a plain function."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from canal.spec import load_workflow
from canal.spec.tool_checks import tool_problems
from tests.conftest import schema, write_workflow

SCHEMAS = {"create_ticket": schema("priority", priority={"type": "integer",
                                                          "enum": [0, 1, 2, 3]},
                                   size="number", tags={"type": "array",
                                                        "items": {"enum": ["a", "b"]}})}


def warnings(workflows: Path, field: dict[str, Any], mapping: Any = "{{gate.ask.f}}",
             argument: str = "priority", **extra: Any) -> list[str]:
    spec = load_workflow(write_workflow(workflows, "w", {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {"f": field, **extra}}},
        "02-call.md": {"type": "automated", "automation": {
            "tool": "create_ticket", "input_mapping": {argument: mapping}}}}))
    found = tool_problems(spec, SCHEMAS.get)
    assert all(p.warning and p.path == "references/02-call.md" for p in found)
    return [f"{p.key}: {p.text}: {p.message}" for p in found]


def test_a_gate_field_without_the_tools_enum_is_a_warning(workflows: Path) -> None:
    assert warnings(workflows, {"type": "integer"}) == [
        "automation.input_mapping.priority: {{gate.ask.f}}: create_ticket accepts only "
        "[0, 1, 2, 3] as priority, which the gate does not enforce: add enum: [0, 1, 2, 3] "
        "to gate field f"]


def test_a_gate_enum_within_the_tools_is_enough(workflows: Path) -> None:
    assert warnings(workflows, {"type": "integer", "enum": [1, 2]}) == []


def test_a_number_field_feeding_an_integer_is_a_warning(workflows: Path) -> None:
    assert warnings(workflows, {"type": "number", "enum": [1]}) == [
        "automation.input_mapping.priority: {{gate.ask.f}}: create_ticket takes priority as "
        "integer, but gate field f is number: set type: integer on gate field f"]
    # a type that never fits is an error of canal.spec.tool_contract, not a warning here
    assert warnings(workflows, {"type": "string", "enum": ["0"]}) == []


def test_an_integer_field_may_feed_a_number(workflows: Path) -> None:
    assert warnings(workflows, {"type": "integer"}, argument="size") == []


def test_only_a_value_that_is_exactly_one_gate_reference_is_judged(workflows: Path) -> None:
    assert warnings(workflows, {"type": "integer"}, mapping="P{{gate.ask.f}}") == []
    assert warnings(workflows, {"type": "integer"}, mapping=7) == []
    # an item enum is not something a gate field can state
    assert warnings(workflows, {"type": "array"}, argument="tags") == []
    # an argument the tool does not declare, or a tool nothing is known about
    assert warnings(workflows, {"type": "integer"}, argument="other") == []
    spec = load_workflow(workflows / "w")
    assert tool_problems(spec, lambda tool: None) == []
