"""Every notebook's code cells run top to bottom without error (one smoke test each)."""

import contextlib
import io
import json
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path):
    cells = json.loads(path.read_text())["cells"]
    namespace: dict = {}
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for cell in cells:
            if cell["cell_type"] == "code":
                exec(compile("".join(cell["source"]), f"{path.name}", "exec"), namespace)
    if path.name == "quickstart.ipynb":
        assert "rejected ['who']" in out.getvalue()
        assert "awaiting_input Said: hello Ada hello Ada" in out.getvalue()
        assert namespace["canal"].current("demo").status == "completed"


def test_there_is_a_notebook():
    assert NOTEBOOKS
