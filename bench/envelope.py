"""Envelope growth: does what an agent reads at a step grow with the workflow's length?

Two generated workflows of the same shape, 4 and 40 steps long: rounds of an interactive
gate (a few fields: a required name with a pattern, an enum described by its codes, a list
with a default), an automated step calling a tool with the gate's answers and a second one
chained on its result; a notification ends each. Compared: the ``start`` envelope as the
CLI prints it (compact JSON), in characters.

Usage: ``python -m bench.envelope`` from the repository root; prints JSON lines.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

from bench.rows import row, run_alone

NAMES = ("envelope_growth",)


def steps(count: int) -> dict[str, Any]:
    """``count`` step files: rounds of gate, tool, chained tool; the last a notification."""
    files: dict[str, Any] = {}
    for i in range(count - 1):
        number, kind = i // 3, i % 3
        if kind == 0:
            files[f"{i + 1:02d}-collect-{number}.md"] = ({
                "type": "interactive",
                "gate": {"schema": {
                    "name": {"type": "string", "required": True, "desc": "Service name",
                             "pattern": r"^[a-z][a-z0-9-]{2,40}$"},
                    "auth_mode": {"type": "integer", "enum": [0, 1, 2, 3], "default": 0,
                                  "desc": "0-pre-auth,1-SDK,2-openapi,3-not-integrated"},
                    "admins": {"type": "array", "default": ["root"],
                               "desc": "Administrators' user names"},
                }},
            }, f"Ask the user what to call service {number} and who administers it.")
        elif kind == 1:
            files[f"{i + 1:02d}-create-{number}.md"] = ({
                "type": "automated",
                "automation": {"tool": "create_service", "input_mapping": {
                    "name": f"{{{{gate.collect-{number}.name}}}}",
                    "auth_mode": f"{{{{gate.collect-{number}.auth_mode}}}}",
                    "admins": f"{{{{gate.collect-{number}.admins}}}}"}},
            }, "")
        else:
            files[f"{i + 1:02d}-grant-{number}.md"] = ({
                "type": "automated",
                "automation": {"tool": "grant_role", "input_mapping": {
                    "service_id": f"{{{{result.create-{number}.id}}}}",
                    "role": "owner of {{gate.collect-" + str(number) + ".name}}"}},
            }, "")
    files[f"{count:02d}-summary.md"] = ({"type": "notification"},
                                        "Every service is created and its owners granted.")
    return files


def _create_service(name: str, auth_mode: int, admins: list[str]) -> dict[str, Any]:
    return {"id": 7, "name": name}


def _grant_role(service_id: int, role: str) -> dict[str, Any]:
    return {"role_id": f"r-{service_id}"}


def start_envelopes(*lengths: int) -> dict[int, str]:
    """The compact JSON of each generated workflow's ``start`` envelope, by length."""
    from canal import Canal, PythonTools
    from tests.conftest import write_workflow

    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        for length in lengths:
            write_workflow(root / "workflows", f"flow-{length:03d}", steps(length))
        tools = PythonTools({"create_service": _create_service, "grant_role": _grant_role})
        with Canal(workflows=root / "workflows", home=root / ".canal", checkpointer="memory:",
                   tools=tools) as canal:
            return {n: json.dumps(canal.start(f"flow-{n:03d}", thread_id=f"t{n:03d}").to_json(),
                                  ensure_ascii=False) for n in lengths}


def measure(quick: bool) -> list[dict[str, Any]]:
    envelopes = start_envelopes(4, 40)
    return [row("envelope_growth", len(envelopes[40]), len(envelopes[4]), "characters",
                "ratio <= 1.1", "`start` envelope (compact JSON) of a generated 40-step "
                "workflow against a 4-step one of the same shape (gates, chained tools, "
                "a notification)")]


if __name__ == "__main__":
    run_alone(measure)
