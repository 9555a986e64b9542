"""The scale benchmarks make rows of the shared shape (``bench.rows``); no timings asserted."""

from __future__ import annotations

from bench.rows import KEYS
from bench.storage import prune_rows, retry_rows


def test_storage_rows_have_exactly_the_row_keys() -> None:
    rows = prune_rows(2) + retry_rows((1, 2, 3))
    assert [r["name"] for r in rows] == ["checkpoint_bytes", "retry_bytes_1", "retry_bytes_2",
                                         "retry_bytes_3", "retry_bytes_per_retry"]
    assert all(tuple(r) == KEYS for r in rows)
    assert rows[0]["canal"] == 0  # prune leaves nothing of the runs behind
