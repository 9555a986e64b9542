"""The validation service of the ``Canal`` facade: one report per workflow, checked on its
own and against what the tool cache knows (``canal validate``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from canal.runtime.tools import ToolCommands


def reports(folder: Path, names: list[str], destructive: Callable[[str], bool],
            tools: ToolCommands, budget: int | None = None,
            every: bool = False) -> list[dict[str, Any]]:
    """``{"workflow", "valid", "problems", "warnings"}`` for each of ``names`` in the
    workflows ``folder`` (``every``: they are all of them, and each folder that leads outside
    ``folder`` is reported as refused). Beyond the workflow's own checks: a ``verify`` tool
    must not be ``destructive``, every call must fit its tool (errors,
    ``canal.spec.tool_contract``), and a gate field that feeds a tool argument should enforce
    its enum and type (a warning, ``canal.spec.tool_checks``). With ``budget`` (tokens),
    each report has ``budget``: ``[{"step", "chars", "tokens"}]`` per step that waits for
    the agent, and a step over it is a warning (``canal.runtime.budget``)."""
    from canal.spec import check_workflow
    from canal.spec.loader import refused_workflows, workflow_dir
    from canal.spec.phases import read_back_problems
    from canal.spec.tool_checks import tool_problems
    from canal.spec.tool_contract import contract_problems

    out = []
    for name in names:
        spec, found = check_workflow(workflow_dir(folder, name))
        if spec is not None:
            found += read_back_problems(spec, destructive)
            found += tool_problems(spec, tools.input_schema)
            found += contract_problems(spec, tools)
        figures = None
        if budget is not None and spec is not None:
            from canal.runtime.budget import budget_of, budget_problems

            figures = budget_of(spec)
            found += budget_problems(spec, figures, budget)
        problems = [p for p in found if not p.warning]
        report = {"workflow": name, "valid": not problems, "problems": problems,
                  "warnings": [p for p in found if p.warning]}
        if budget is not None:
            report["budget"] = figures or []
        out.append(report)
    if every:
        out += [{"workflow": p.path, "valid": False, "problems": [p], "warnings": []}
                for p in refused_workflows(folder)]
    return out
