"""``python -m bench [--quick] [--json] [--only NAME[,NAME]]``: every benchmark figure in one run.

Each module in ``MEASURES`` has ``measure(quick) -> list[dict]`` (rows of ``bench.rows.row``)
and may list the names of the figures it makes in ``NAMES``; ``--only`` picks modules by
their own name (``runtime``) or by one of those names (``advance_overhead_ratio``).

Output: without ``--json``, a Markdown table of the rows followed by a line describing the
machine; with ``--json``, one JSON object per row (exactly ``bench.rows.KEYS``), the last one
named ``machine`` with the machine in its ``note``. A module that cannot be imported or whose
``measure`` raises becomes a row whose ``note`` starts with ``error:``, and the command then
exits 1 once every other module has run. Targets are checked at the end: a line on standard
error names every row whose target is not met (an unmet target does not change the exit
code; a figure held to a target that could not be taken counts as unmet).
"""

from __future__ import annotations

import argparse
import importlib
import json
import operator
import os
import platform
import re
import sys
import time
from collections.abc import Callable, Sequence
from types import ModuleType
from typing import Any

from bench.rows import KEYS, failed

# Add a module here to add its figures to the run.
MEASURES = [
    "bench.envelope",
    "bench.runtime",
    "bench.startup",
    "bench.tools",
    "bench.search_latency",
    "bench.agent",
    "bench.discover",
    "bench.throughput",
    "bench.storage",
    "bench.memory",
    "bench.server",
    "bench.serve",
]

_TARGET = re.compile(r"\s*(ratio\s*)?(<=|>=|<|>)\s*(-?[0-9.]+)")
_COMPARE: dict[str, Callable[[float, float], bool]] = {
    "<=": operator.le, ">=": operator.ge, "<": operator.lt, ">": operator.gt}


def main(argv: Sequence[str] | None = None, measures: Sequence[str] = MEASURES) -> int:
    """Run ``measures`` (module names), print their rows; 1 when one of them failed."""
    args = _parser().parse_args(argv)
    wanted = set(filter(None, (args.only or "").split(",")))
    began = time.perf_counter()
    loaded = [_load(name) for name in measures]
    unknown = wanted - set().union(*(names for _, names, _ in loaded))
    if unknown:
        print(f"bench: no measure named {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    out = _Printer(args.json)
    rows: list[dict[str, Any]] = []
    broken = False
    for module, names, error in loaded:
        if wanted and not wanted & names:
            continue
        found, ok = _run(module, args.quick) if module is not None else ([error], False)
        broken |= not ok
        for figure in found:
            out.row(figure)
            rows.append(figure)
    out.machine(time.perf_counter() - began)
    _report_targets(rows)
    return 1 if broken else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m bench",
                                     description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples (a few minutes)")
    parser.add_argument("--json", action="store_true", help="JSON lines instead of Markdown")
    parser.add_argument("--only", metavar="NAME[,NAME]",
                        help="only the modules with these names or making these figures")
    return parser


def _load(name: str) -> tuple[ModuleType | None, set[str], dict[str, Any]]:
    """The module, the names ``--only`` knows it by, and (when it cannot be imported) its
    error row."""
    short = name.rsplit(".", 1)[-1]
    try:
        module = importlib.import_module(name)
    except Exception as exc:  # noqa: BLE001 - a missing or broken module is a reported row
        return None, {short}, failed(short, f"error: cannot import {name}: {_text(exc)}")
    return module, {short, *getattr(module, "NAMES", ())}, {}


def _run(module: ModuleType, quick: bool) -> tuple[list[dict[str, Any]], bool]:
    """The module's rows and True, or one error row and False when ``measure`` raises or
    returns rows of another shape."""
    name = ([*getattr(module, "NAMES", ())] or [module.__name__.rsplit(".", 1)[-1]])[0]
    try:
        found = list(module.measure(quick))
        bad = [r for r in found if not isinstance(r, dict) or tuple(r) != KEYS]
        if bad:
            raise ValueError(f"a row without exactly the keys {', '.join(KEYS)}: {bad[0]!r}")
    except Exception as exc:  # noqa: BLE001 - one failing measure must not stop the others
        return [failed(name, f"error: {_text(exc)}")], False
    return found, True


def _text(exc: BaseException) -> str:
    return " ".join(f"{type(exc).__name__}: {exc}".split())


def met(figure: dict[str, Any]) -> bool | None:
    """Whether ``figure`` meets its target (None: it has none); a target canal cannot read
    or a figure without a value is not met."""
    target = figure["target"]
    if target is None:
        return None
    found = _TARGET.match(target)
    value = figure["ratio"] if found and found[1] else figure["canal"]
    if found is None or value is None:
        return False
    return _COMPARE[found[2]](value, float(found[3]))


def _report_targets(rows: list[dict[str, Any]]) -> None:
    held = [r for r in rows if met(r) is not None]
    unmet = [r for r in held if not met(r)]
    if held and not unmet:
        print(f"bench: all {len(held)} targets met", file=sys.stderr)
        return
    listed = "; ".join(f"{r['name']} ({_value(r)}, target {r['target']})" for r in unmet)
    print(f"bench: {len(unmet)} of {len(held)} targets not met: {listed}", file=sys.stderr)


def _value(figure: dict[str, Any]) -> str:
    if figure["canal"] is None:
        return "no value"
    ratio = "" if figure["ratio"] is None else f", ratio {figure['ratio']}"
    return f"{figure['canal']} {figure['unit']}{ratio}"


def machine() -> str:
    return (f"{os.cpu_count()} CPUs (os.cpu_count()), Python {platform.python_version()}, "
            f"{platform.platform()}")


class _Printer:
    """Rows as they come: JSON lines, or the lines of a Markdown table."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        if not as_json:
            print("| " + " | ".join(KEYS) + " |")
            print("|" + "---|" * len(KEYS), flush=True)

    def row(self, figure: dict[str, Any]) -> None:
        if self.as_json:
            print(json.dumps(figure), flush=True)
            return
        cells = ["-" if figure[k] is None else str(figure[k]).replace("|", "\\|") for k in KEYS]
        print("| " + " | ".join(cells) + " |", flush=True)

    def machine(self, seconds: float) -> None:
        text = f"{machine()}; the run took {seconds:.0f} s"
        if self.as_json:
            print(json.dumps(failed("machine", text)), flush=True)
        else:
            print(f"\nMachine: {text}.", flush=True)


if __name__ == "__main__":
    sys.exit(main())
