"""``discover``: sync the configured MCP servers' tools into the cache and report the change.

One broken server does not stop the others: its error is reported, and the tools it had in
the cache are kept (canal cannot tell whether they still exist). Automatic rules are
regenerated; hand-written rule lines survive (see ``canal.tools.rules``).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

from canal.errors import ToolError
from canal.tools.cache import TOOL_NAME, ToolCache, ToolMeta, index_markdown
from canal.tools.rules import auto_rules, merge_rules
from canal.tools.servers import ServerConfig


def discover(servers: dict[str, ServerConfig], cache: ToolCache,
             workflows: list[tuple[str, str]], logs: Path | None = None) -> dict[str, Any]:
    """List every server's tools, update the cache, and return the summary document
    (``logs``: the folder of the stdio servers' stderr logs)."""
    from canal.tools.mcp import McpConnections

    listed: dict[str, list[dict[str, Any]]] = {}
    report: dict[str, dict[str, Any]] = {}
    connections = McpConnections(servers, logs)
    try:
        for name in sorted(servers):
            try:
                listed[name] = connections.list_tools(name)
            except ToolError as exc:
                report[name] = {"status": "error", "error": exc.message}
    finally:
        connections.close()

    old = {meta.name: meta for meta in cache.all()}
    kept = [m for m in old.values() if m.server in servers and m.server not in listed]
    new = _name_tools(listed, kept, report)
    for name, tools in listed.items():
        report[name] = {"status": "ok", "tools": len(tools), **report.get(name, {})}

    rules = {m.name: merge_rules(cache.rules_text(m.name), auto_rules(m.input_schema))
             for m in new.values()}
    added = sorted(set(new) - set(old))
    removed = sorted(set(old) - set(new))
    changed = sorted(n for n in set(new) & set(old) if new[n].digest != old[n].digest
                     or new[n].server != old[n].server)
    cache.save(list(new.values()), rules, removed,
               index_markdown(workflows, list(new.values())))
    failed = [n for n, r in report.items() if r["status"] == "error"]
    return {
        "status": "ok" if not failed else ("partial" if listed else "error"),
        "total": len(new), "added_count": len(added), "removed_count": len(removed),
        "changed_count": len(changed), "added": added, "removed": removed,
        "changed": changed, "workflow_count": len(workflows), "servers": report,
    }


def _name_tools(listed: dict[str, list[dict[str, Any]]], kept: list[ToolMeta],
                report: dict[str, dict[str, Any]]) -> dict[str, ToolMeta]:
    """canal names: the bare tool name, or ``server.tool`` where two servers share a name."""
    pairs = [(server, tool["name"]) for server, tools in listed.items() for tool in tools]
    pairs += [(meta.server, meta.tool) for meta in kept]
    counts = Counter(tool for _, tool in pairs)
    out: dict[str, ToolMeta] = {}
    for server, tools in listed.items():
        for tool in tools:
            if not TOOL_NAME.fullmatch(tool["name"]):
                report.setdefault(server, {}).setdefault("skipped", []).append(
                    f"{tool['name']!r}: not a safe tool name (letters, digits, '_', '.', '-')")
                continue
            name = tool["name"] if counts[tool["name"]] == 1 else f"{server}.{tool['name']}"
            out[name] = ToolMeta.from_listing(name, server, tool)
    for meta in kept:
        name = meta.tool if counts[meta.tool] == 1 else f"{meta.server}.{meta.tool}"
        out[name] = ToolMeta(**{**meta.__dict__, "name": name})
    return out

