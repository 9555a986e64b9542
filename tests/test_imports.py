"""Imports run one way (spec <- nodes <- graphs <- runtime <- cli), with no cycles, counting
the imports inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "canal"
# layer -> packages it must never import
FORBIDDEN = {
    "spec": ("nodes", "graphs", "runtime", "cli", "checkpoints", "tools", "integrations"),
    "nodes": ("graphs", "runtime", "cli", "checkpoints", "integrations"),
    "graphs": ("runtime", "cli", "checkpoints", "integrations"),
    "runtime": ("cli", "integrations"),
    "checkpoints": ("nodes", "graphs", "runtime", "cli", "spec", "tools", "integrations"),
    "tools": ("nodes", "graphs", "runtime", "cli", "checkpoints", "integrations"),
    "integrations": ("cli",),
}


def module_imports() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("canal"):
                targets.add(node.module or "")
                targets.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                targets.update(a.name for a in node.names if a.name.startswith("canal"))
        found[name] = targets
    return {name: {t for t in targets if t in found} for name, targets in found.items()}


def test_layers_import_one_way():
    wrong = []
    for name, targets in module_imports().items():
        layer = name.split(".")[1] if name.count(".") else ""
        for target in targets:
            if target.count(".") and target.split(".")[1] in FORBIDDEN.get(layer, ()):
                wrong.append(f"{name} imports {target}")
    assert wrong == []


def test_no_import_cycles():
    graph = module_imports()
    cycles = []

    def visit(name: str, path: list[str]) -> None:
        for target in sorted(graph[name]):
            if target in path:
                cycles.append(path[path.index(target):] + [target])
            elif target not in done:
                visit(target, path + [target])
        done.add(name)

    done: set[str] = set()
    for name in sorted(graph):
        if name not in done:
            visit(name, [name])
    # a package's __init__ re-exporting its own modules is not a cycle of modules
    real = [c for c in cycles if not any(b.startswith(a + ".") for a, b in zip(c, c[1:]))]
    assert real == []
