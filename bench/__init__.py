"""canal's benchmarks: ``python -m bench [--quick] [--json]`` from the repository root.

Each measure module has ``measure(quick: bool) -> list[dict]``; every dict is one figure made
by ``bench.rows.row``.
"""
