"""The small interface automated steps call tools through, and the in-process implementation.

A ``ToolClient`` turns ``(tool name, arguments)`` into a JSON-plain result or raises
``ToolError`` with the tool's message. The runtime calls ``close()`` when an operation
(start, advance, abort) ends, so a client may keep connections open across the chain of
automated steps one operation runs, and must not keep them longer (unless wrapped in
``HeldOpen``, which a long-lived process asks for).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping
from typing import Any, Protocol, runtime_checkable

from canal.errors import ToolError
from canal.jsontypes import INT64_MAX, INT64_MIN, Checked


@runtime_checkable
class ToolClient(Protocol):
    def call(self, tool: str, arguments: dict[str, Any], timeout: float | None = None) -> Any:
        """Call ``tool`` once; return its JSON-plain result or raise ToolError.

        ``timeout`` (seconds) overrides the client's own limit where it can enforce one.
        """
        ...

    def prepare(self, tool: str) -> None:
        """Get ready to call ``tool`` without sending it anything (import its function,
        start its server, open the session); ToolError when that fails. The call journal
        records a call as sent only after this, so a process killed while a server starts
        has sent nothing, and the call goes out automatically on recovery."""
        ...

    def safe_to_repeat(self, tool: str) -> bool:
        """Whether calling ``tool`` twice is harmless (read-only or idempotent)."""
        ...

    def destructive(self, tool: str) -> bool:
        """Whether ``tool`` is known to destroy (MCP's ``destructiveHint`` explicitly true):
        a workflow then asks for confirmation before calling it."""
        ...

    def server_of(self, tool: str) -> str | None:
        """The MCP server that serves ``tool`` (None when it is not on a server): a workflow
        that lists ``servers`` refuses tools served elsewhere."""
        ...

    def close(self) -> None:
        """Release whatever the calls since the last close opened."""
        ...


def argument_check(tools: ToolClient) -> Callable[[str, dict[str, Any]], Checked]:
    """``tools.check_arguments`` when the client has one (canal's own do); else a check that
    passes everything, as for a tool that declares nothing."""
    found = getattr(tools, "check_arguments", None)
    return found if found is not None else lambda _tool, arguments: Checked(
        data=dict(arguments))


def json_plain(value: Any, tool: str) -> Any:
    """``value`` as JSON-plain data that every checkpointer can store, or ToolError.

    The call has happened, so what LangGraph's serializer cannot write is kept in a safe
    form rather than lost: an integer outside 64 bits becomes its decimal digits (a string),
    a lone UTF-16 surrogate becomes U+FFFD. What is not JSON data at all (NaN, infinity, an
    integer too long to write as text, other objects) is a ToolError.
    """
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError) as exc:
        raise ToolError(f"{tool}: the result is not JSON data ({exc})", tool=tool) from exc
    text = text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return json.loads(text, parse_int=_int64_or_digits)


def _int64_or_digits(digits: str) -> int | str:
    number = int(digits)
    return number if INT64_MIN <= number <= INT64_MAX else digits


class Delegating:
    """A ``ToolClient`` that passes everything on to ``inner``; subclasses change ``call``."""

    def __init__(self, inner: ToolClient) -> None:
        self.inner = inner

    def call(self, tool: str, arguments: dict[str, Any], timeout: float | None = None) -> Any:
        return self.inner.call(tool, arguments, timeout)

    def prepare(self, tool: str) -> None:
        self.inner.prepare(tool)

    def safe_to_repeat(self, tool: str) -> bool:
        return self.inner.safe_to_repeat(tool)

    def destructive(self, tool: str) -> bool:
        return self.inner.destructive(tool)

    def server_of(self, tool: str) -> str | None:
        return self.inner.server_of(tool)

    def read_only(self, tool: str) -> bool:
        """Whether ``tool`` only reads (an optional method of a client; none: it does not)."""
        inner = getattr(self.inner, "read_only", None)
        return bool(inner(tool)) if inner is not None else False

    def check_arguments(self, tool: str, arguments: dict[str, Any]) -> Checked:
        """``arguments`` checked against what ``tool`` declares (types, required fields,
        enums), as ``canal call`` checks them, from what is known without starting
        anything: a workflow sends nothing when the check fails. An optional method of a
        client, like ``read_only``: a client without one checks nothing, so a ``ToolClient``
        written before it still works."""
        return argument_check(self.inner)(tool, arguments)

    def close(self) -> None:
        self.inner.close()


class HeldOpen(Delegating):
    """A client whose connections outlive each operation, for a long-lived process that
    asks for it (``Canal.keep_tool_sessions``): ``close`` keeps them, ``release`` ends them.
    A session that broke meanwhile is opened again by the next call."""

    def close(self) -> None:
        """Keep the connections: more operations will use them."""

    def release(self) -> None:
        self.inner.close()


class StorableResults(Delegating):
    """Any ``ToolClient``, its results made storable by ``json_plain``: how ``Canal`` holds
    a client passed in by a user to what its own clients (``PythonTools``, MCP) do."""

    def call(self, tool: str, arguments: dict[str, Any], timeout: float | None = None) -> Any:
        return json_plain(self.inner.call(tool, arguments, timeout), tool)


class PythonTools:
    """Tools that are plain Python callables, called with the arguments as keywords.

    A tool is given as a callable or as a ``"module:function"`` import path, imported on its
    first call (so listing or reading runs imports nothing). Any exception a callable raises
    becomes a ``ToolError`` carrying its message, so a failing function parks the run like a
    failing MCP tool would.
    """

    def __init__(self, tools: Mapping[str, Callable[..., Any] | str] | None = None) -> None:
        self._tools = dict(tools or {})

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def _function(self, tool: str) -> Callable[..., Any]:
        function = self._tools.get(tool)
        if function is None:
            known = ", ".join(sorted(self._tools)) or "none"
            raise ToolError(f"unknown tool {tool!r} (known: {known})", tool=tool)
        if isinstance(function, str):
            module, _, name = function.partition(":")
            try:
                function = getattr(importlib.import_module(module), name)
            except (ImportError, AttributeError) as exc:
                raise ToolError(f"{tool}: cannot import {self._tools[tool]!r}: {exc}",
                                tool=tool) from exc
            self._tools[tool] = function
        return function

    def call(self, tool: str, arguments: dict[str, Any], timeout: float | None = None) -> Any:
        """Call the function; ``timeout`` is not enforced (a Python call cannot be stopped
        safely). ``ConnectionError`` and ``TimeoutError`` count as transient."""
        function = self._function(tool)
        try:
            result = function(**arguments)
        except Exception as exc:  # the boundary: any failure of user code is a tool error
            raise ToolError(f"{tool}: {type(exc).__name__}: {exc}", tool=tool,
                            transient=isinstance(exc, (ConnectionError, TimeoutError))) from exc
        return json_plain(result, tool)

    def prepare(self, tool: str) -> None:
        """Import the tool's function (ToolError when it cannot be)."""
        self._function(tool)

    def safe_to_repeat(self, tool: str) -> bool:
        """Python tools carry no annotations: a step declares ``automation.idempotent``."""
        return False

    def destructive(self, tool: str) -> bool:
        """Python tools carry no annotations: a step declares ``confirm: true``."""
        return False

    def read_only(self, tool: str) -> bool:
        """Python tools carry no annotations: none counts as only reading."""
        return False

    def server_of(self, tool: str) -> str | None:
        """Python tools run in this process, on no server."""
        return None

    def check_arguments(self, tool: str, arguments: dict[str, Any]) -> Checked:
        """Python tools declare no input schema, so any arguments pass: a keyword the
        function does not take fails the call itself (a ``TypeError``, so a ToolError)
        before the function's body runs."""
        return Checked(data=dict(arguments))

    def close(self) -> None:
        """Nothing to release: the callables live in this process."""
