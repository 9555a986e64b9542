"""The two ways a node leaves its step: on to the next step that runs, or to the abort.

Both close the step's span (``canal.nodes.spans``) and report it to LangChain; ``go_on``
also decides the ``when`` conditions of the steps that follow (``canal.nodes.route``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.graph import END
from langgraph.types import Command

from canal.nodes.base import COMPENSATE, aborted_update
from canal.nodes.deps import Deps
from canal.nodes.route import onward
from canal.nodes.spans import closed, opened, report
from canal.spec.models import WorkflowSpec


def go_on(spec: WorkflowSpec, step_id: str | None, state: Mapping[str, Any],
          update: dict[str, Any], deps: Deps, outcome: str = "completed") -> Command:
    """Leave ``step_id`` (None: the start) with ``update`` for the next step that runs;
    a run that ends here closes its tool connections (a pause closes them in ``ask``)."""
    goto, full = onward(spec, step_id, state, update, deps.sealer, outcome)
    report(full["log"])
    if goto is None:  # the run ends here: no later step will use a connection
        deps.tools.close()
    return Command(goto=goto or END, update=full)


def go_abort(spec: WorkflowSpec, step_id: str | None, state: Mapping[str, Any],
             log: list[dict[str, Any]] | None = None,
             added: Mapping[str, int] | None = None) -> Command:
    """Abort the run at ``step_id``: its compensations run next."""
    update = aborted_update(step_id)
    spans = [closed(spec, step_id, state, added, "aborted")] if step_id else []
    update["log"] = [*(log or []), *update["log"], *spans]
    update["span"] = opened(None)
    report(spans)
    return Command(goto=COMPENSATE, update=update)
