"""Drift: which workflow steps call a tool that the last ``discover`` saw change or vanish.

A tool's change is what its digest covers: the input schema, the output schema and the
annotations. ``canal validate`` then reports what the change breaks (the contract checks of
``canal.spec.tool_contract``); this list tells the person running ``discover`` where to
look first.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from canal.tools.cache import ToolMeta


def affected_steps(root: Path, before: list[ToolMeta], removed: list[str],
                   changed: list[str]) -> list[dict[str, str]]:
    """``[{"workflow", "step", "tool", "change"}]``: every call (``automation``, ``verify``,
    ``compensate``) of a readable workflow under ``root`` to a tool in ``removed`` or
    ``changed``, by either of its names (``tool`` or ``server.tool``), as the cache held
    them ``before`` the discover."""
    from canal.spec.loader import list_workflows
    from canal.spec.tool_contract import calls_of
    from canal.spec.validate import check_workflow

    kinds = {**dict.fromkeys(changed, "changed"), **dict.fromkeys(removed, "removed")}
    names: dict[str, str] = {}  # any name a step may use -> the tool's canal name
    for meta in before:
        if meta.name in kinds:
            names[meta.name] = names[f"{meta.server}.{meta.tool}"] = meta.name
    if not names:
        return []
    out: list[dict[str, Any]] = []
    for workflow in list_workflows(root):
        spec, _ = check_workflow(root / workflow)
        if spec is None:
            continue
        for step in spec.steps:
            for _key, tool, _mapping, _ in calls_of(step):
                if tool in names:
                    item = {"workflow": workflow, "step": step.id, "tool": tool,
                            "change": kinds[names[tool]]}
                    if item not in out:
                        out.append(item)
    return out
