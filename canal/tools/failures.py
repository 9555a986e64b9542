"""How a failed MCP tool call reads: one table of messages.

``canal call`` and an automated step call tools through the same ``McpConnections``, and
every ``ToolError`` it raises is made here, so an agent reads the same words for the same
failure either way: the ``message`` of ``canal call``'s error document is the step's
``errors[0]["error"]``.

A failure of the connection (the server could not start, crashed, did not answer in time)
is ``transient`` (worth retrying a tool that is safe to repeat) and, for a stdio server,
ends with the last lines of the server's stderr and the path of its log
(``canal.tools.serverlog``). An error the tool itself reports (``isError``) is the tool's
own words.
"""

from __future__ import annotations

from typing import Literal

from canal.errors import ToolError
from canal.tools.serverlog import ServerLog

FailureKind = Literal["tool_error", "not_configured", "start", "crashed", "timeout", "failed"]

MESSAGES: dict[str, str] = {
    "tool_error": "{tool}: {detail}",
    "not_configured": "no MCP server {server!r} is configured (known: {detail})",
    "start": "cannot start MCP server {server!r} ({command}): {cause}",
    "crashed": ("{tool}: MCP server {server!r} failed: the server closed the connection "
                "(it may have crashed)"),
    "timeout": "{tool}: MCP server {server!r} failed: no answer within {detail}",
    "failed": "{tool}: MCP server {server!r} failed: {detail}",
}
# why a server could not start, by the kind of failure its start-up met
CAUSES: dict[str, str] = {
    "crashed": "the server exited before it was ready",
    "timeout": "no answer within {detail}",
    "failed": "{detail}",
}
TRANSIENT = frozenset({"start", "crashed", "timeout", "failed"})


def tool_failure(kind: FailureKind, server: str, tool: str | None = None, detail: str = "",
                 command: str = "", log: ServerLog | None = None,
                 cause: FailureKind = "failed") -> ToolError:
    """The ``ToolError`` for a failure of ``kind`` calling ``tool`` on ``server`` (for
    ``start``: ``command`` could not start, ``cause`` says how)."""
    why = CAUSES.get(cause, CAUSES["failed"]).format(detail=detail)
    message = MESSAGES[kind].format(tool=tool, server=server, detail=detail, command=command,
                                    cause=why)
    transient = kind in TRANSIENT
    if transient and log is not None:
        message += log.pointer()
    return ToolError(message, transient=transient, server=server, tool=tool,
                     log=str(log.path) if transient and log is not None else None)


def timeout_detail(seconds: float, overridden: bool) -> str:
    """``timeout``'s detail: how long, and whose limit it was."""
    whose = "the step's" if overridden else "the server's"
    return f"{seconds:g}s ({whose} timeout)"
