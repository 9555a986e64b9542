"""How nodes read references (``{{gate...}}``, ``{{result...}}``) over a run's values.

A step that a ``when`` condition skipped (``skipped`` in the state, reason ``when``) has
no values: a reference to it is absent (an argument left out, empty text), never an
error. A step skipped by the ``skip`` action after a failure keeps the old rule: a
reference to its missing result is an error, so the next step stops and says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from canal.nodes.sensitive import TextSealer, open_gate
from canal.spec.templates import Lookup, state_lookup

SKIPPED_BY_CONDITION = "when"
SKIPPED_BY_ACTION = "action"


def skipped_steps(values: Mapping[str, Any]) -> set[str]:
    """The steps a condition skipped: their values are absent, not an error."""
    return {step for step, why in (values.get("skipped") or {}).items()
            if why == SKIPPED_BY_CONDITION}


def run_lookup(values: Mapping[str, Any], sealer: TextSealer | None) -> Lookup:
    """References over a run's values (sealed gate values opened when ``sealer`` is given)."""
    return state_lookup(open_gate(values.get("gate") or {}, sealer), values.get("result") or {},
                        absent=skipped_steps(values))
