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


def test_every_error_canal_raises_on_purpose_lives_in_errors_and_in_all():
    import importlib
    import pkgutil

    import canal.errors

    # entry points whose import runs them: the CLI, and the server loading the project
    entry_points = {"canal.__main__", "canal.integrations.langgraph_server"}
    for module in pkgutil.walk_packages(canal.__path__, "canal."):
        if module.name not in entry_points:
            importlib.import_module(module.name)
    found, todo = set(), [canal.CanalError]
    while todo:
        cls = todo.pop()
        found.add(cls)
        todo.extend(cls.__subclasses__())
    assert {c.__module__ for c in found} == {"canal.errors"}
    assert {c.__name__ for c in found} <= set(canal.errors.__all__)
    assert set(canal.errors.__all__) <= set(canal.__all__)
    tree = canal.errors.__doc__
    assert all(c.__name__ in tree for c in found)
