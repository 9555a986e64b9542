"""The ``ToolClient`` a ``Canal`` uses by default: Python tools named in ``canal.yaml`` first,
then MCP tools from the tool cache, each server connected only when one of its tools runs.

Arguments reach a tool exactly as the step's ``input_mapping`` resolves them (an ``IGNORE``
rule hides a field from agents, it does not drop what a workflow author wrote); before that
they are checked against the tool's schema and its rules' ENUMs (``check_arguments``), as
``canal call`` checks them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from canal.errors import ConfigError, NotFound, ToolError
from canal.jsontypes import Checked
from canal.tools.cache import ToolCache
from canal.tools.client import Delegating, PythonTools, ToolClient


class RoutedTools:
    """``logs``: the folder of the stdio servers' stderr logs (``canal.tools.serverlog``)."""

    def __init__(self, python: PythonTools, cache: ToolCache, mcp_config: Path,
                 logs: Path | None = None) -> None:
        self.python = python
        self.cache = cache
        self.mcp_config = mcp_config
        self.logs = logs
        self._mcp: Any = None

    def connections(self) -> Any:
        """The MCP connections, created (not connected) on first use."""
        if self._mcp is None:
            from canal.tools.mcp import McpConnections
            from canal.tools.servers import load_servers

            try:
                servers = load_servers(self.mcp_config)
            except ConfigError as exc:
                raise ToolError(exc.message) from exc
            self._mcp = McpConnections(servers, self.logs)
        return self._mcp

    def _meta(self, tool: str) -> Any:
        try:
            return self.cache.get(tool)
        except NotFound as exc:
            raise ToolError(exc.message, tool=tool) from exc

    def call(self, tool: str, arguments: dict[str, Any], timeout: float | None = None) -> Any:
        if tool in self.python:
            return self.python.call(tool, arguments, timeout)
        meta = self._meta(tool)
        return self.connections().call(meta.server, meta.tool, arguments, timeout)

    def prepare(self, tool: str) -> None:
        """Import a Python tool, or start the tool's MCP server and open its session."""
        if tool in self.python:
            self.python.prepare(tool)
        else:
            self.connections().connect(self._meta(tool).server)

    def destructive(self, tool: str) -> bool:
        """MCP's ``destructiveHint`` explicitly true in the cache (absent is not destructive)."""
        if tool in self.python:
            return False
        try:
            return self.cache.get(tool).annotations.get("destructiveHint") is True
        except NotFound:
            return False

    def server_of(self, tool: str) -> str | None:
        """The MCP server that serves ``tool`` (None for a Python tool or an unknown one)."""
        if tool in self.python:
            return None
        try:
            return self.cache.get(tool).server
        except NotFound:
            return None

    def safe_to_repeat(self, tool: str) -> bool:
        """MCP's ``readOnlyHint`` or ``idempotentHint`` (explicitly true) in the cache."""
        if tool in self.python:
            return self.python.safe_to_repeat(tool)
        try:
            hints = self.cache.get(tool).annotations
        except NotFound:
            return False
        return hints.get("readOnlyHint") is True or hints.get("idempotentHint") is True

    def read_only(self, tool: str) -> bool:
        """MCP's ``readOnlyHint`` explicitly true in the cache (a rewind may pass over a
        call of such a tool; ``canal.nodes.rewind``)."""
        if tool in self.python:
            return self.python.read_only(tool)
        try:
            return self.cache.get(tool).annotations.get("readOnlyHint") is True
        except NotFound:
            return False

    def check_arguments(self, tool: str, arguments: dict[str, Any]) -> Checked:
        """The check ``canal call`` makes (``canal.tools.meta.check_arguments``), from the
        tool cache: no server is started. A tool the cache does not know is not checked
        (its call fails as it always did)."""
        if tool in self.python:
            return self.python.check_arguments(tool, arguments)
        from canal.tools.meta import check_arguments, rules_of

        try:
            meta = self.cache.get(tool)
        except NotFound:
            return Checked(data=dict(arguments))
        return check_arguments(meta, rules_of(self.cache.rules_text(meta.name)), arguments)

    def close(self) -> None:
        if self._mcp is not None:
            self._mcp.close()
            self._mcp = None


class FencedTools(Delegating):
    """A client that refuses tools living on servers a workflow did not allow.

    Python tools (configured by whoever runs canal) are not on a server and pass.
    """

    def __init__(self, inner: ToolClient, servers: tuple[str, ...], workflow: str) -> None:
        super().__init__(inner)
        self.servers, self.workflow = servers, workflow

    def _check(self, tool: str) -> None:
        server = self.inner.server_of(tool)
        if server is not None and server not in self.servers:
            raise ToolError(f"{tool} is served by {server!r}, which workflow "
                            f"{self.workflow!r} may not use (servers: "
                            f"{', '.join(self.servers) or 'none'})", tool=tool)

    def call(self, tool: str, arguments: dict[str, Any], timeout: float | None = None) -> Any:
        self._check(tool)
        return self.inner.call(tool, arguments, timeout)

    def prepare(self, tool: str) -> None:
        self._check(tool)
        super().prepare(tool)
