"""canal's benchmarks: ``python -m bench [--quick] [--json] [--only NAME[,NAME]]`` from the
repository root.

Each measure module has ``measure(quick: bool) -> list[dict]``; every dict is one figure made
by ``bench.rows.row`` (or ``bench.rows.failed`` when it could not be taken). A module may name
the figures it makes in ``NAMES`` (for ``--only``), runs alone with ``python -m bench.NAME``
through ``bench.rows.run_alone``, and is added to the run in ``bench/__main__.py``'s
``MEASURES``.
"""
