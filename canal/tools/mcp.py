"""Synchronous access to MCP servers: one session per server, opened on first use.

The only module that imports the MCP SDK and ``langchain-mcp-adapters``. canal's runtime is
synchronous, MCP is asynchronous: an event loop runs in a daemon thread, and each server's
session lives in a task of its own (anyio requires a context to be entered and left by the
same task). ``close()`` ends every session, which stops stdio server processes.

Sessions are opened lazily and kept until ``close()``, so a chain of automated steps in one
``advance`` starts each server once, and ``start``/``current`` start none unless a step runs.
A call that times out or loses its server drops that session; the next call opens a new one.
"""

from __future__ import annotations

import asyncio
import json
import logging
import threading
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import timedelta
from typing import Any

from canal.errors import ToolError
from canal.jsontypes import refuse_constant
from canal.tools.client import json_plain
from canal.tools.servers import ServerConfig

_log = logging.getLogger("canal.tools")
_GRACE = 10.0  # seconds on top of a server's timeout before canal stops waiting itself


class _Loop:
    """An asyncio loop in a daemon thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="canal-mcp",
                                       daemon=True)
        self.thread.start()

    def run(self, coro: Any, timeout: float) -> Any:
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except FutureTimeout:
            future.cancel()
            raise

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        if not self.thread.is_alive():
            self.loop.close()


class _Session:
    """One server's session, held open by a task until ``stop`` is set."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.stop = asyncio.Event()
        self.task = asyncio.create_task(self._hold())

    async def _hold(self) -> None:
        from langchain_mcp_adapters.sessions import create_session

        try:
            async with create_session(self.config.connection()) as session:  # type: ignore[arg-type]
                await asyncio.wait_for(session.initialize(), self.config.timeout)
                self.ready.set_result(session)
                await self.stop.wait()
        except BaseException as exc:
            if not self.ready.done():
                self.ready.set_exception(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise

    async def close(self) -> None:
        self.stop.set()
        try:
            await asyncio.wait_for(self.task, 10)
        except (TimeoutError, Exception):  # noqa: BLE001 - the server is gone either way
            self.task.cancel()


class McpConnections:
    """Sessions to the configured MCP servers, each opened on first use."""

    def __init__(self, servers: dict[str, ServerConfig]) -> None:
        # The SDK warns on stderr about every call to a tool it has not listed; canal
        # reports failures itself.
        logging.getLogger("mcp").setLevel(logging.ERROR)
        _hide_env_warnings()
        self.servers = servers
        self._loop: _Loop | None = None
        self._sessions: dict[str, _Session] = {}
        self._warned: set[str] = set()

    def _run(self, coro: Any, timeout: float) -> Any:
        if self._loop is None:
            self._loop = _Loop()
        return self._loop.run(coro, timeout)

    def _config(self, server: str) -> ServerConfig:
        config = self.servers.get(server)
        if config is None:
            known = ", ".join(sorted(self.servers)) or "none"
            raise ToolError(f"no MCP server {server!r} is configured (known: {known})",
                            server=server)
        return config

    async def _open(self, config: ServerConfig) -> Any:
        held = self._sessions.get(config.name)
        if held is None or held.task.done():
            held = self._sessions[config.name] = _Session(config)
        return await held.ready

    async def _drop(self, server: str) -> None:
        held = self._sessions.pop(server, None)
        if held is not None:
            await held.close()

    def _session_call(self, server: str, action: str, make: Any,
                      timeout: float | None = None) -> Any:
        """Open (or reuse) ``server``'s session and run ``make(session)`` on the loop.

        Every failure is a ToolError; failures of the connection (start-up, crash, no
        answer in time) are marked transient, an error the tool itself reports is not.
        """
        config = self._config(server)
        if config.unset and server not in self._warned:
            self._warned.add(server)  # named, never shown: the value may hold a secret
            _log.warning("MCP server %r: %s, which is not set (sent as written)", server,
                         "; ".join(config.unset))
        limit = timeout or config.timeout

        async def run() -> Any:
            try:
                session = await self._open(config)
            except BaseException as exc:
                await self._drop(server)
                raise ToolError(f"cannot start MCP server {server!r} ({config.describe()}): "
                                f"{_reason(exc, config.timeout)}", server=server,
                                transient=True) from exc
            try:
                return await make(session)
            except BaseException as exc:
                await self._drop(server)
                if isinstance(exc, asyncio.CancelledError):
                    raise
                raise ToolError(f"{action}: MCP server {server!r} failed: "
                                f"{_reason(exc, limit)}", server=server,
                                transient=True) from exc

        try:
            return self._run(run(), config.timeout + limit + _GRACE)
        except FutureTimeout as exc:
            self._run(self._drop(server), _GRACE)
            raise ToolError(f"{action}: MCP server {server!r} did not answer within "
                            f"{limit:g}s", server=server, transient=True) from exc

    def list_tools(self, server: str) -> list[dict[str, Any]]:
        """Every tool ``server`` offers (following ``tools/list`` pagination), as plain dicts."""
        timeout = timedelta(seconds=self._config(server).timeout)

        async def collect(session: Any) -> list[dict[str, Any]]:
            tools: list[dict[str, Any]] = []
            cursor, pages = None, 0
            while True:
                page = await asyncio.wait_for(session.list_tools(cursor=cursor),
                                              timeout.total_seconds())
                tools.extend(t.model_dump(mode="json", exclude_none=True) for t in page.tools)
                cursor, pages = page.nextCursor, pages + 1
                if not cursor or pages >= 1000:
                    return tools

        return self._session_call(server, "tools/list", collect)

    def connect(self, server: str) -> None:
        """Start ``server`` and open its session (reused by the calls that follow)."""

        async def ready(session: Any) -> None:
            return None

        self._session_call(server, "connect", ready)

    def call(self, server: str, tool: str, arguments: dict[str, Any],
             timeout: float | None = None) -> Any:
        """Call ``tool`` on ``server`` once; the result, or ToolError with the server's words.
        ``timeout`` (seconds) replaces the server's configured limit for this call."""
        limit = timedelta(seconds=timeout or self._config(server).timeout)

        async def call(session: Any) -> Any:
            return await session.call_tool(tool, arguments, read_timeout_seconds=limit)

        result = self._session_call(server, tool, call, timeout)
        return tool_result(tool, result)

    def close(self) -> None:
        """End every session (stdio servers exit) and stop the loop thread."""
        if self._loop is None:
            return
        sessions, self._sessions = list(self._sessions.values()), {}

        async def close_all() -> None:
            await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)

        try:
            self._loop.run(close_all(), 30)
        except FutureTimeout:
            pass
        finally:
            self._loop.stop()
            self._loop = None


class _NoEnvValues(logging.Filter):
    """Drops the adapter's warning about a ``${VAR}`` left in an ``env`` value: it prints
    the value, which may be a secret. canal expands ``env`` itself and warns about the
    variables that are not set by name only."""

    def filter(self, record: logging.LogRecord) -> bool:
        return "env[" not in str(record.msg)


def _hide_env_warnings() -> None:
    logger = logging.getLogger("langchain_mcp_adapters.sessions")
    if not any(isinstance(f, _NoEnvValues) for f in logger.filters):
        logger.addFilter(_NoEnvValues())


def tool_result(tool: str, result: Any) -> Any:
    """A ``CallToolResult`` as canal stores it: ``structuredContent``, else the text parsed as
    JSON when it parses, else the text; ``isError`` raises ToolError with the text."""
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    text = "\n".join(texts)
    if result.isError:
        text = text.removeprefix(f"Error executing tool {tool}: ")  # FastMCP's wrapper
        raise ToolError(f"{tool}: {text or 'the tool reported an error'}", tool=tool)
    if result.structuredContent is not None:
        return json_plain(result.structuredContent, tool)
    if not texts:
        return json_plain([c.model_dump(mode="json") for c in result.content], tool)
    try:
        parsed = json.loads(text, parse_constant=refuse_constant)
    except ValueError:
        return json_plain(text, tool)
    return json_plain(parsed, tool)


def _reason(exc: BaseException, timeout: float) -> str:
    """The most telling message inside ``exc`` (task groups wrap the real error)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    error = getattr(exc, "error", None)  # McpError carries ErrorData
    message = getattr(error, "message", None) or str(exc) or type(exc).__name__
    if isinstance(exc, asyncio.TimeoutError) or message.startswith("Timed out"):
        return f"no answer within {timeout:g}s (the server's timeout)"
    if message == "Connection closed":
        return "the server closed the connection (it may have crashed)"
    return message
