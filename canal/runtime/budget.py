"""Context budget: about how much an agent reads at each step of a workflow.

At a step that waits for the agent (interactive or notification), the agent reads one
envelope: the step's instructions, its gate, its reference files, and the envelope around
them (status, ``next`` with one line per field). The estimate builds that envelope from the
spec alone, as ``canal start`` or ``advance`` would return it at the step, with nothing run:
the instructions are the step's body as written (a ``{{...}}`` counts as its template text,
since the values are not known yet). Tokens are characters / 4 (no tokenizer): a rough,
stable figure to compare steps and catch a step that grew too big.
"""

from __future__ import annotations

import json
from typing import Any

from canal.errors import Problem
from canal.spec.models import WorkflowSpec

THREAD = "0" * 32  # a thread id as long as the ones canal makes


def budget_of(spec: WorkflowSpec) -> list[dict[str, Any]]:
    """``[{"step", "chars", "tokens"}]`` for every step that waits for the agent."""
    from canal.runtime.envelope import envelope_of

    out = []
    for step in spec.steps:
        if step.type == "automated":
            continue  # canal runs it; the agent reads nothing unless it fails
        values = {"status": "running", "cursor": step.id, "gate": {}, "result": {}}
        document = envelope_of(THREAD, spec, values, None).to_json()
        document["step"]["instructions"] = step.body.strip()
        chars = len(json.dumps(document, ensure_ascii=False, allow_nan=False))
        out.append({"step": step.id, "chars": chars, "tokens": -(-chars // 4)})
    return out


def budget_problems(spec: WorkflowSpec, figures: list[dict[str, Any]],
                    limit: int) -> list[Problem]:
    """A warning for each step whose estimate is over ``limit`` tokens."""
    paths = {step.id: step.path for step in spec.steps}
    return [Problem(paths[f["step"]], f"an agent reads about {f['tokens']} tokens at this "
                                      f"step ({f['chars']} characters / 4), over the budget "
                                      f"of {limit}: shorten its instructions or its reference "
                                      "files, or split the step", key="budget", warning=True)
            for f in figures if f["tokens"] > limit]
