"""The tool service of the ``Canal`` facade: discover, index, meta and call."""

from __future__ import annotations

from typing import Any

from canal.config import Settings
from canal.errors import NeedsConfirmation, NotFound
from canal.tools.cache import ToolCache


class ToolCommands:
    """Tool commands over one project's settings and tool cache."""

    def __init__(self, settings: Settings, tool_cache: ToolCache,
                 routes_tools: bool = True) -> None:
        self.settings = settings
        self.tool_cache = tool_cache
        # False: runs call a ToolClient passed in, which may know tools the cache does not
        self.routes_tools = routes_tools

    def discover(self) -> dict[str, Any]:
        """Sync every configured MCP server's tools into the cache; the change summary, with
        ``affected``: the workflow steps that call a tool that changed or disappeared."""
        from canal.runtime.drift import affected_steps
        from canal.spec.loader import describe_workflows
        from canal.tools.discover import discover
        from canal.tools.servers import load_servers

        servers = load_servers(self.settings.mcp_config)
        before = self.tool_cache.all()
        summary = discover(servers, self.tool_cache,
                           describe_workflows(self.settings.workflows), self.settings.logs)
        summary["affected"] = affected_steps(self.settings.workflows, before,
                                             summary["removed"], summary["changed"])
        return summary

    def index(self, full: bool = False) -> dict[str, Any]:
        """Workflows first, then tools, one short line each (``full``: objects instead, with
        each tool's server and hints)."""
        from canal.spec.loader import describe_workflows

        workflows = describe_workflows(self.settings.workflows)
        tools = self.tool_cache.all()
        if not full:
            return {"status": "ok", "workflows": [f"{n}: {d}" for n, d in workflows],
                    "tools": [m.line() for m in tools]}
        return {"status": "ok",
                "workflows": [{"name": n, "description": d} for n, d in workflows],
                "tools": [{"name": m.name, "description": m.summary(), "server": m.server,
                           "hints": m.hints()} for m in tools]}

    def hints(self, tool: str) -> dict[str, Any]:
        """The MCP annotations of ``tool`` from the tool cache: ``{}`` for a Python tool or
        one the cache does not know. Reads files only; never starts a server."""
        if tool in self.settings.python_tools:
            return {}
        try:
            return dict(self.tool_cache.get(tool).annotations)
        except NotFound:
            return {}

    def input_schema(self, tool: str) -> dict[str, Any] | None:
        """The input schema workflow calls of ``tool`` are checked against (its rules'
        ENUMs merged in), from the tool cache: None for a Python tool or one the cache does
        not know. Reads files only; never starts a server."""
        from canal.tools.meta import checked_schema, rules_of

        if tool in self.settings.python_tools:
            return None
        try:
            meta = self.tool_cache.get(tool)
        except NotFound:
            return None
        return checked_schema(meta, rules_of(self.tool_cache.rules_text(meta.name)))

    def known_tools(self) -> list[str] | None:
        """Every name a workflow may call a tool by (canal names, ``server.tool`` forms, the
        Python tools and canal's built-in authoring tools), or None when there is no tool
        cache yet (nothing was ever discovered, so an MCP tool's name cannot be judged) or
        when runs call a client passed in (it may know tools of its own)."""
        if not self.routes_tools or not (self.tool_cache.folder / "index.json").is_file():
            return None
        from canal.authoring.builtins import BUILTIN_TOOLS

        names = set(self.settings.python_tools) | set(BUILTIN_TOOLS)
        for meta in self.tool_cache.all():
            names |= {meta.name, f"{meta.server}.{meta.tool}"}
        return sorted(names)

    def output_schema(self, tool: str) -> dict[str, Any] | None:
        """The output schema ``tool`` declares (MCP ``outputSchema``), from the tool cache:
        None for a Python tool, an unknown tool, or one that declares none."""
        if tool in self.settings.python_tools:
            return None
        try:
            return self.tool_cache.get(tool).output_schema
        except NotFound:
            return None

    def meta(self, tool: str, required_only: bool = False) -> dict[str, Any]:
        """One tool's fields after its rules, with notes and annotations."""
        from canal.tools.meta import describe, rules_of

        meta = self.tool_cache.get(tool)
        return describe(meta, rules_of(self.tool_cache.rules_text(meta.name)), required_only)

    def call(self, tool: str, arguments: Any, confirm: bool = False) -> dict[str, Any]:
        """One tool call, checked against the tool's metadata before anything is sent.

        A tool whose annotations say ``destructiveHint: true`` is called only with
        ``confirm=True`` (``--confirm``); a tool without annotations is not destructive.
        """
        from canal.limits import check as check_limits
        from canal.limits import json_plain_data
        from canal.tools.mcp import McpConnections
        from canal.tools.meta import check_arguments, rules_of
        from canal.tools.servers import load_servers

        meta = self.tool_cache.get(tool)
        if meta.annotations.get("destructiveHint") is True and not confirm:
            raise NeedsConfirmation(
                f"{meta.name} is destructive (its server says destructiveHint); nothing was "
                "sent: call it again with --confirm to go ahead", tool=meta.name)
        arguments = json_plain_data(arguments)
        check_limits(arguments, "the arguments", self.settings.limits)
        check = check_arguments(meta, rules_of(self.tool_cache.rules_text(meta.name)),
                                arguments)
        out: dict[str, Any] = {"tool": meta.name, "server": meta.server,
                               "missing": check.missing, "errors": check.errors,
                               "dropped": check.dropped}
        if not check.accepted:
            return {"status": "rejected", **out}
        connections = McpConnections(load_servers(self.settings.mcp_config), self.settings.logs)
        try:
            result = connections.call(meta.server, meta.tool, check.data)
        finally:
            connections.close()
        return {"status": "ok", **out, "arguments": check.data, "result": result}
