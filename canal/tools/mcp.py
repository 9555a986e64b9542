"""Synchronous access to MCP servers: one session per server, opened on first use.

The only module that imports the MCP SDK and ``langchain-mcp-adapters``. canal's runtime is
synchronous, MCP is asynchronous: an event loop runs in a daemon thread, and each server's
session lives in a task of its own (anyio requires a context to be entered and left by the
same task). ``close()`` ends every session, which stops stdio server processes.

Sessions are opened lazily and kept until ``close()``, so a chain of automated steps in one
``advance`` starts each server once, and ``start``/``current`` start none unless a step runs.
A call that times out or loses its server drops that session; the next call opens a new one.

Stdio servers are kept quiet and tidy:

* their stderr goes to ``<logs>/<server>.log`` (``canal.tools.serverlog``), never to the
  agent's terminal, and an error about a server names that log;
* they run under ``canal.tools.supervisor``, which stops a server (and what it started) as
  soon as canal's process is gone, even after a SIGKILL (POSIX; Linux at once, elsewhere
  within half a second);
* while sessions are open, SIGTERM and SIGHUP unwind canal like Ctrl-C
  (``canal.tools.signals``), so ``close()`` runs and the servers exit in order.

Every failure is worded by ``canal.tools.failures``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import sys
import threading
from collections.abc import AsyncIterator
from concurrent.futures import TimeoutError as FutureTimeout
from datetime import timedelta
from pathlib import Path
from typing import Any, TextIO

from canal.jsontypes import refuse_constant
from canal.tools.client import json_plain
from canal.tools.failures import FailureKind, timeout_detail, tool_failure
from canal.tools.serverlog import ServerLog
from canal.tools.servers import ServerConfig
from canal.tools.signals import StopSignals

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
        except BaseException:  # a timeout, or Ctrl-C / SIGTERM while waiting
            future.cancel()
            raise

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)
        if not self.thread.is_alive():
            self.loop.close()


class _Session:
    """One server's session, held open by a task until ``stop`` is set."""

    def __init__(self, config: ServerConfig, log: ServerLog | None) -> None:
        self.config = config
        self.log = log
        self.ready: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.stop = asyncio.Event()
        self.task = asyncio.create_task(self._hold())

    async def _hold(self) -> None:
        try:
            with contextlib.ExitStack() as files:
                errlog = None
                if self.config.transport == "stdio":
                    errlog = files.enter_context(self._errlog())
                async with _connect(self.config, errlog) as session:
                    await asyncio.wait_for(session.initialize(), self.config.timeout)
                    self.ready.set_result(session)
                    await self.stop.wait()
        except BaseException as exc:
            if not self.ready.done():
                self.ready.set_exception(exc)
            if isinstance(exc, asyncio.CancelledError):
                raise

    def _errlog(self) -> TextIO:
        """The stdio server's stderr: its log, or nowhere when there is no log folder."""
        if self.log is not None:
            return self.log.open()
        return open(os.devnull, "w")  # _hold's ExitStack closes it

    async def close(self) -> None:
        self.stop.set()
        try:
            await asyncio.wait_for(self.task, 10)
        except (TimeoutError, Exception):  # noqa: BLE001 - the server is gone either way
            self.task.cancel()


@contextlib.asynccontextmanager
async def _connect(config: ServerConfig, errlog: TextIO | None) -> AsyncIterator[Any]:
    """An MCP ``ClientSession`` to ``config``'s server, not yet initialized. A stdio server
    runs under canal's supervisor with ``errlog`` as its stderr (the adapter takes no
    ``errlog``, so canal starts stdio servers with the SDK itself)."""
    if config.transport != "stdio":
        from langchain_mcp_adapters.sessions import create_session

        async with create_session(config.connection()) as session:  # type: ignore[arg-type]
            yield session
        return
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    from canal.tools.supervisor import supervised

    command, args = supervised(config.command or "", list(config.args))
    params = StdioServerParameters(command=command, args=args, env=config.env, cwd=config.cwd)
    async with stdio_client(params, errlog=errlog or sys.stderr) as (read, write), \
            ClientSession(read, write) as session:
        yield session


class McpConnections:
    """Sessions to the configured MCP servers, each opened on first use. Stdio servers
    write their stderr to ``<logs>/<server>.log`` (discarded when ``logs`` is None)."""

    def __init__(self, servers: dict[str, ServerConfig], logs: Path | None = None) -> None:
        # The SDK warns on stderr about every call to a tool it has not listed; canal
        # reports failures itself.
        logging.getLogger("mcp").setLevel(logging.ERROR)
        _hide_env_warnings()
        self.servers = servers
        self.logs = logs
        self._loop: _Loop | None = None
        self._sessions: dict[str, _Session] = {}
        self._warned: set[str] = set()
        self._signals = StopSignals()

    def _run(self, coro: Any, timeout: float) -> Any:
        if self._loop is None:
            self._signals.install()
            self._loop = _Loop()
        return self._loop.run(coro, timeout)

    def _config(self, server: str) -> ServerConfig:
        config = self.servers.get(server)
        if config is None:
            raise tool_failure("not_configured", server,
                               detail=", ".join(sorted(self.servers)) or "none")
        return config

    def _log(self, config: ServerConfig) -> ServerLog | None:
        if config.transport != "stdio" or self.logs is None:
            return None
        return ServerLog(self.logs, config)

    async def _open(self, config: ServerConfig) -> Any:
        held = self._sessions.get(config.name)
        if held is None or held.task.done():
            held = self._sessions[config.name] = _Session(config, self._log(config))
        return await held.ready

    async def _drop(self, server: str) -> ServerLog | None:
        """End ``server``'s session; its log (read it after this: the server has exited)."""
        held = self._sessions.pop(server, None)
        if held is None:
            return None
        await held.close()
        return held.log

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
                log = await self._drop(server)
                kind, detail = _reason(exc, config.timeout, False)
                raise tool_failure("start", server, detail=detail, command=config.describe(),
                                   log=log, cause=kind) from exc
            try:
                return await make(session)
            except BaseException as exc:
                log = await self._drop(server)
                if isinstance(exc, asyncio.CancelledError):
                    raise
                kind, detail = _reason(exc, limit, timeout is not None)
                raise tool_failure(kind, server, action, detail, log=log) from exc

        try:
            return self._run(run(), config.timeout + limit + _GRACE)
        except FutureTimeout as exc:
            log = self._run(self._drop(server), _GRACE)
            raise tool_failure("timeout", server, action,
                               timeout_detail(limit, timeout is not None), log=log) from exc

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
        return tool_result(server, tool, result)

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
            self._signals.restore()


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


def tool_result(server: str, tool: str, result: Any) -> Any:
    """A ``CallToolResult`` as canal stores it: ``structuredContent``, else the text parsed as
    JSON when it parses, else the text; ``isError`` raises ToolError with the text."""
    texts = [c.text for c in result.content if getattr(c, "type", None) == "text"]
    text = "\n".join(texts)
    if result.isError:
        text = text.removeprefix(f"Error executing tool {tool}: ")  # FastMCP's wrapper
        raise tool_failure("tool_error", server, tool, text or "the tool reported an error")
    if result.structuredContent is not None:
        return json_plain(result.structuredContent, tool)
    if not texts:
        return json_plain([c.model_dump(mode="json") for c in result.content], tool)
    try:
        parsed = json.loads(text, parse_constant=refuse_constant)
    except ValueError:
        return json_plain(text, tool)
    return json_plain(parsed, tool)


def _reason(exc: BaseException, timeout: float, overridden: bool) -> tuple[FailureKind, str]:
    """The kind of failure ``exc`` is, and its most telling message (task groups wrap the
    real error)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    error = getattr(exc, "error", None)  # McpError carries ErrorData
    message = getattr(error, "message", None) or str(exc) or type(exc).__name__
    if isinstance(exc, asyncio.TimeoutError) or message.startswith("Timed out"):
        return "timeout", timeout_detail(timeout, overridden)
    if message == "Connection closed":
        return "crashed", ""
    return "failed", message
