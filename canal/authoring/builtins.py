"""canal's own authoring operations as in-process tools, known without configuration.

``canal_new``, ``canal_add_step`` and ``canal_validate`` act on the workflows folder of the
``Canal`` that offers them; the shipped ``create-workflow`` workflow calls them from its
automated steps, as any workflow calls an MCP tool. A failure (a name taken, a bad option)
is a tool error, so the run parks at that step and the agent can edit its answers.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from canal.authoring.create import add_step, new_workflow

Validate = Callable[[list[str]], list[dict[str, Any]]]
BUILTIN_TOOLS = ("canal_new", "canal_add_step", "canal_validate")


def _given(value: Any) -> Any:
    """None for an answer left empty (``""``, ``[]``, ``{}``)."""
    return None if value in ("", [], {}) else value


def builtin_tools(workflows: Path, validate: Validate) -> dict[str, Callable[..., Any]]:
    """The tools, bound to the workflows folder ``workflows`` and to ``validate`` (the
    facade's ``Canal.validate``)."""

    def canal_new(name: str, description: str) -> dict[str, Any]:
        return new_workflow(workflows, name, description)

    def canal_add_step(workflow: str, id: str, type: str,
                       title: str | None = None, fields: list[str] | None = None,
                       tool: str | None = None,
                       map: Mapping[str, Any] | list[str] | None = None,
                       after: str | None = None) -> dict[str, Any]:
        return add_step(workflows, workflow, id, type, title=_given(title),
                        fields=_given(fields) or (), tool=_given(tool),
                        mapping=_given(map) or (), after=_given(after))

    def canal_validate(workflow: str) -> dict[str, Any]:
        report = validate([workflow])[0]
        problems = [p.to_json() for p in report["problems"]]
        return {"status": "invalid" if problems else "ok", "workflow": workflow,
                "valid": not problems, "problems": problems,
                "warnings": [p.to_json() for p in report["warnings"]]}

    return {"canal_new": canal_new, "canal_add_step": canal_add_step,
            "canal_validate": canal_validate}
