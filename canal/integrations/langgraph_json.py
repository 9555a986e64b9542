"""``canal langgraph-json``: the project's workflows written into ``langgraph.json``, one
graph per workflow, its id the workflow's name and its value canal's server entry
(``canal.integrations.langgraph_server:<name>``).

The file's other keys and the graphs that are not canal's are kept; canal's entries are
replaced by the workflows there are now, so a deleted workflow's entry goes too. A file
without ``dependencies`` gets ``["."]``, which ``langgraph dev`` and ``langgraph build``
need. A graph of the user's own with a workflow's name is a conflict: nothing is written.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from canal.errors import ConfigError
from canal.jsontypes import refuse_constant

ENTRY_MODULE = "canal.integrations.langgraph_server"


def _ours(spec: Any) -> bool:
    return isinstance(spec, str) and spec.startswith(f"{ENTRY_MODULE}:")


def _read(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        config = json.loads(path.read_text(encoding="utf-8"), parse_constant=refuse_constant)
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise ConfigError(f"{path}: cannot read it as JSON: {exc}; nothing was written") from exc
    if not isinstance(config, dict) or not isinstance(config.get("graphs", {}), dict):
        raise ConfigError(f"{path}: expected a JSON object whose 'graphs' is an object; "
                          "nothing was written")
    return config


def write_langgraph_json(path: Path, workflows: list[str]) -> dict[str, Any]:
    """Write ``workflows`` into the ``langgraph.json`` at ``path`` (made if missing) and say
    what changed: ``{"status", "path", "graphs", "added", "removed"}``."""
    config = _read(path)
    graphs: dict[str, Any] = config.get("graphs", {})
    before = sorted(name for name, spec in graphs.items() if _ours(spec))
    taken = sorted(name for name in workflows if name in graphs and not _ours(graphs[name]))
    if taken:
        raise ConfigError(f"{path}: graph(s) {', '.join(taken)} are not canal's but have a "
                          "workflow's name; rename one of them; nothing was written")
    kept = {name: spec for name, spec in graphs.items() if not _ours(spec)}
    ours = {name: f"{ENTRY_MODULE}:{name}" for name in sorted(workflows)}
    config = {"dependencies": ["."], **config, "graphs": {**kept, **ours}}
    tmp = path.with_name(path.name + ".tmp")
    try:
        text = json.dumps(config, indent=2, ensure_ascii=False, allow_nan=False)
        tmp.write_text(text + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise ConfigError(f"{path}: cannot write it: {exc}") from exc
    return {"status": "ok", "path": str(path), "graphs": sorted(ours),
            "added": sorted(set(ours) - set(before)),
            "removed": sorted(set(before) - set(ours))}
