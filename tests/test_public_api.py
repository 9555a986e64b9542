"""The public surface is exactly ``canal.__all__``, and importing it is cheap."""

import subprocess
import sys

import canal


def test_all_names_exist_and_are_sorted():
    assert canal.__all__ == sorted(canal.__all__)
    for name in canal.__all__:
        assert hasattr(canal, name), name


def test_every_public_error_derives_from_canal_error():
    errors = [getattr(canal, n) for n in canal.__all__ if n.endswith(("Error", "Invalid",
                                                                         "NotFound", "Name"))]
    assert errors and all(issubclass(e, canal.CanalError) for e in errors)


def test_import_does_not_load_the_graph_engine_or_mcp():
    code = ("import sys, canal; print(sorted(m for m in sys.modules if m.startswith("
            "('langgraph', 'langchain', 'mcp'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
