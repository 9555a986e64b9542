"""One benchmark figure: the row shape every measure returns and ``python -m bench`` prints."""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable
from typing import Any

KEYS = ("name", "canal", "baseline", "ratio", "unit", "target", "note")


def row(name: str, canal: float, baseline: float | None, unit: str, target: str | None,
        note: str) -> dict[str, Any]:
    """A figure: canal's value against a baseline (``ratio`` is canal / baseline, None when
    there is no baseline), its unit, the target it is held to (text such as ``"ratio <= 0.05"``
    or ``"<= 100 ms"``; None for a figure that only informs) and a one-line note saying what
    was measured and how."""
    ratio = round(canal / baseline, 4) if baseline else None
    return {"name": name, "canal": _round(canal), "baseline": _round(baseline),
            "ratio": ratio, "unit": unit, "target": target, "note": note}


def median_ms(samples: list[float]) -> float:
    """The median of durations in seconds, in milliseconds."""
    return statistics.median(samples) * 1000


def _round(value: float | None) -> float | None:
    if value is None:
        return None
    return round(value, 2) if abs(value) < 1000 else round(value)


def failed(name: str, note: str, unit: str = "", target: str | None = None) -> dict[str, Any]:
    """A figure that could not be taken: no values, ``note`` says why."""
    return {"name": name, "canal": None, "baseline": None, "ratio": None, "unit": unit,
            "target": target, "note": note}


def run_alone(measure: Callable[[bool], list[dict[str, Any]]]) -> None:
    """Run one measure module on its own (``python -m bench.NAME [--quick]``): print its
    rows as JSON lines."""
    quick = "--quick" in sys.argv[1:]
    for figure in measure(quick):
        print(json.dumps(figure), flush=True)
