"""``python -m bench``: every printed row has exactly the fixed keys, and a measure that fails
is reported as a row and makes the command exit non-zero without stopping the others."""

from __future__ import annotations

import json

import pytest

from bench.__main__ import main, met
from bench.rows import KEYS

RAISES = '''
NAMES = ("always_fails",)

def measure(quick):
    raise RuntimeError("no backend")
'''


def printed(capsys: pytest.CaptureFixture[str]) -> list[dict]:
    return [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_only_runs_the_named_measure_and_every_row_has_the_fixed_keys(capsys):
    assert main(["--quick", "--json", "--only", "envelope_growth"]) == 0
    rows = printed(capsys)
    assert [r["name"] for r in rows] == ["envelope_growth", "machine"]
    for figure in rows:
        assert tuple(figure) == KEYS
        if figure["baseline"]:
            assert figure["ratio"] == pytest.approx(figure["canal"] / figure["baseline"],
                                                    rel=1e-3)


def test_a_failing_measure_is_a_row_and_the_exit_code_says_so(capsys, tmp_path, monkeypatch):
    (tmp_path / "bench_raises.py").write_text(RAISES)
    monkeypatch.syspath_prepend(str(tmp_path))
    measures = ["bench_raises", "bench.no_such_measure", "bench.envelope"]
    assert main(["--quick", "--json"], measures=measures) == 1
    captured = capsys.readouterr()
    rows = {r["name"]: r for r in map(json.loads, captured.out.splitlines())}
    assert rows["always_fails"]["note"] == "error: RuntimeError: no backend"
    assert rows["no_such_measure"]["note"].startswith("error: cannot import")
    assert rows["envelope_growth"]["ratio"] is not None  # the others still ran
    assert all(tuple(r) == KEYS for r in rows.values())


def test_an_unknown_name_is_refused_before_anything_runs(capsys):
    assert main(["--only", "nothing_by_that_name"], measures=["bench_never_imported"]) == 2
    captured = capsys.readouterr()
    assert "no measure named nothing_by_that_name" in captured.err
    assert captured.out == ""


@pytest.mark.parametrize(("target", "canal", "ratio", "expected"), [
    ("ratio <= 1.1", 5.0, 1.0, True), ("ratio <= 1.1", 5.0, 1.2, False),
    ("<= 100 ms", 80.0, None, True), ("<= 100 ms", None, None, False),
    (None, 1.0, None, None), ("fast enough", 1.0, None, False)])
def test_targets(target, canal, ratio, expected):
    assert met({"target": target, "canal": canal, "ratio": ratio}) is expected
