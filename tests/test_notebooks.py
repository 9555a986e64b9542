"""The notebooks, executed in a real Jupyter kernel as a user runs them (top-level ``await``
and rich display work there), checked by what their cells produce."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def execute(name: str, tmp_path: Path) -> list[dict[str, Any]]:
    """Run notebook ``name`` top to bottom; the outputs of each code cell."""
    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    NotebookClient(notebook, timeout=120, kernel_name="python3",
                   resources={"metadata": {"path": str(tmp_path)}}).execute()
    return [cell.outputs for cell in notebook.cells if cell.cell_type == "code"]


def printed(outputs: list[Any]) -> str:
    return "".join(o.get("text", "") for cell in outputs for o in cell
                   if o.get("output_type") == "stream" and o.get("name") == "stdout")


def test_quickstart(tmp_path):
    text = printed(execute("quickstart.ipynb", tmp_path))
    assert "rejected ['who']" in text
    assert "awaiting_input Said: hello Ada hello Ada" in text
    assert text.rstrip().splitlines()[-2] == "completed"


def test_embedding(tmp_path):
    outputs = execute("embedding.ipynb", tmp_path)
    text = printed(outputs)
    # by hand: the interrupt, a rejection, the notification, the end
    assert "ask ['times', 'who']\n" in text
    assert "ask ['who'] ['times']\n" in text
    assert "Said: hello Ada hello Ada\ncompleted {'text': 'hello Ada hello Ada'}\n" in text
    # nested: pre-answered through the parent, acknowledged through the parent
    assert "Said: hello Grace\ncompleted HELLO GRACE\n" in text
    # streamed with top-level await: one update per step, the tool's events as it runs
    assert ("step run.begin\nstep ask\ntool greet started \ntool greet finished True\n"
            "step greet\nstep __interrupt__\ncompleted\n") in text
    # an agent (LangChain's create_agent, an offline model) through canal's tools
    assert "['start', 'advance', 'advance']\ncompleted {'text': 'hello Edsger'}\n" in text
    # the graph, as Mermaid for Jupyter to render
    (shown,) = [o["data"]["text/markdown"] for o in outputs[-1] if "data" in o]
    assert shown.startswith("```mermaid\n") and "greet.call" in shown


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_notebooks_are_kept_without_outputs(path):
    cells = nbformat.read(path, as_version=4).cells
    assert all(not c.outputs and c.execution_count is None
               for c in cells if c.cell_type == "code")
