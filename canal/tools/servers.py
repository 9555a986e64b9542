"""MCP server configuration from the ``mcpServers`` object of ``.mcp.json``.

The file is the one Claude Code, Claude Desktop and Cursor read::

    {"mcpServers": {
        "platform": {"command": "python", "args": ["server.py"], "env": {"TOKEN": "${TOKEN}"}},
        "remote":   {"type": "http", "url": "https://host/mcp", "headers": {"Authorization": "..."}}
    }}

A server with ``command`` is a stdio server (``args``, ``env``, ``cwd`` optional; a relative
``cwd`` is taken from the file's folder). A server with ``url`` speaks streamable HTTP, or SSE
when ``type`` (or ``transport``) is ``sse``. ``"disabled": true`` leaves a server out. canal
also reads ``timeout`` (seconds a tool call may take, default 60, at most a day). Keys other
clients use (``alwaysAllow``, ``autoApprove``, ...) are ignored. ``${VAR}`` in ``env`` values
and ``headers`` is expanded from canal's environment; a reference to a variable that
is not set is sent as written, with a warning that names the variable, never the value.

``env`` and ``headers`` often hold secrets: they are never part of a message or ``repr``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from canal.errors import ConfigError
from canal.limits import too_many_digits

SERVER_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
DEFAULT_TIMEOUT = 60.0
MAX_TIMEOUT = 86400  # a day: longer is no limit, and overflows the clocks that enforce it
_REFERENCE = re.compile(r"\$\{([^}]+)\}")
_HTTP_TYPES = {"http": "streamable_http", "streamable-http": "streamable_http",
               "streamable_http": "streamable_http", "sse": "sse"}


@dataclass(frozen=True)
class ServerConfig:
    """How to reach one MCP server."""

    name: str
    transport: str                       # stdio | streamable_http | sse
    command: str | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] | None = field(default=None, repr=False)
    cwd: str | None = None
    url: str | None = None
    headers: dict[str, str] | None = field(default=None, repr=False)
    timeout: float = DEFAULT_TIMEOUT
    unset: tuple[str, ...] = ()          # "env TOKEN uses ${TOKEN}", a variable not set

    def connection(self) -> dict[str, Any]:
        """The connection dict ``langchain_mcp_adapters.sessions.create_session`` takes."""
        if self.transport == "stdio":
            conn: dict[str, Any] = {"transport": "stdio", "command": self.command,
                                    "args": list(self.args)}
            if self.env is not None:
                conn["env"] = dict(self.env)
            if self.cwd is not None:
                conn["cwd"] = self.cwd
            return conn
        conn = {"transport": self.transport, "url": self.url}
        if self.headers:
            conn["headers"] = dict(self.headers)
        return conn

    def describe(self) -> str:
        """A one-line, secret-free description (command or URL)."""
        if self.transport == "stdio":
            return " ".join([self.command or "", *self.args]).strip()
        return f"{self.transport} {self.url}"


def load_servers(path: Path) -> dict[str, ServerConfig]:
    """Every enabled server in ``path``; a missing file means no servers."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise ConfigError(f"{path}: is nested too deeply") from exc
    except ValueError as exc:  # an integer longer than Python converts
        raise ConfigError(f"{path}: {too_many_digits('it').message}") from exc
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ConfigError(f"{path}: expected an object with an 'mcpServers' object")
    out = {}
    for name, entry in servers.items():
        config = _server(path, name, entry)
        if config is not None:
            out[name] = config
    return out


def _server(path: Path, name: str, entry: Any) -> ServerConfig | None:
    def bad(message: str) -> ConfigError:
        return ConfigError(f"{path}: mcpServers.{name}: {message}")

    if not SERVER_NAME.fullmatch(name):
        raise bad("a server name is letters, digits, '_' and '-' (at most 64)")
    if not isinstance(entry, dict):
        raise bad("expected an object")
    if not isinstance(entry.get("disabled", False), bool):
        raise bad("disabled must be true or false")
    if entry.get("disabled") is True:
        return None
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) \
            or not 0 < timeout <= MAX_TIMEOUT:
        raise bad(f"timeout is a number of seconds from 0 (exclusive) to {MAX_TIMEOUT}")
    kind = entry.get("type", entry.get("transport"))
    if kind is not None and not isinstance(kind, str):
        raise bad("type must be a string (stdio, http, streamable-http or sse)")
    if "command" in entry:
        if kind not in (None, "stdio"):
            raise bad(f"a server with 'command' is a stdio server, not {kind!r}")
        command, args = entry["command"], entry.get("args", [])
        if not isinstance(command, str) or not command:
            raise bad("command must be a non-empty string")
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise bad("args must be a list of strings")
        env, unset = _expanded(_strings(entry.get("env"), bad, "env"), "env")
        cwd = entry.get("cwd")
        if cwd is not None and (not isinstance(cwd, str) or not cwd):
            raise bad("cwd must be a non-empty string")
        if cwd is not None:
            cwd = str((path.parent / cwd).resolve())
        return ServerConfig(name, "stdio", command=command, args=tuple(args), env=env, cwd=cwd,
                            timeout=float(timeout), unset=unset)
    if "url" in entry:
        transport = _HTTP_TYPES.get(kind or "http")
        if transport is None:
            raise bad(f"unknown type {kind!r} (known: stdio, http, streamable-http, sse)")
        url = entry["url"]
        if not isinstance(url, str) or not url.startswith(("http://", "https://")):
            raise bad("url must be an http:// or https:// URL")
        headers, unset = _expanded(_strings(entry.get("headers"), bad, "headers"), "headers")
        return ServerConfig(name, transport, url=url, headers=headers, timeout=float(timeout),
                            unset=unset)
    raise bad("needs 'command' (a stdio server) or 'url' (an HTTP server)")


def _strings(value: Any, bad: Any, key: str) -> dict[str, str] | None:
    if value is None:
        return None
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise bad(f"{key} must map names to strings")
    return dict(value)


def _expanded(values: dict[str, str] | None,
              key: str) -> tuple[dict[str, str] | None, tuple[str, ...]]:
    """``values`` with each ``${VAR}`` replaced by the variable, and a note of each
    reference to a variable that is not set (left as written)."""
    if values is None:
        return None, ()
    unset: list[str] = []

    def variable(match: re.Match[str]) -> str:
        if match[1] in os.environ:
            return os.environ[match[1]]
        unset.append(f"{key} {name} uses {match[0]}")
        return match[0]

    out = {}
    for name, value in values.items():
        out[name] = _REFERENCE.sub(variable, value)
    return out, tuple(unset)
