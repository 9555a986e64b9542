"""A real MCP server (stdio, the ``mcp`` SDK's low-level API) whose tools a test controls.

``python toolbox.py SPEC.json NAME`` serves the tools listed in SPEC.json and appends one
line to ``starts.log`` beside it at every start, and one JSON line per call to ``calls.log``.
The spec is read at start, so a test changes the tool list between discover runs by
rewriting the file. ``tools/list`` pages through ``page_size`` tools at a time.

Spec::

    {"page_size": 2, "tools": [{"name": "add", "description": "...", "inputSchema": {...},
      "outputSchema": {...},
      "annotations": {...}, "behavior": "echo" | "text" | "plain" | "error" | "crash" | "hang"
      | "slow" | "blocking" | "noisy" | "store" | "fetch", "result": {...}, "seconds": 5}]}

Behaviours: ``echo`` returns ``{"tool": name, "arguments": args}`` (plus ``result``) as
structured content; ``text`` returns ``result`` as JSON text only; ``plain`` returns
``result`` as plain text; ``error`` answers ``isError`` with ``result`` as the message;
``crash`` exits the process mid-call; ``hang`` never answers; ``slow`` answers like ``echo``
after ``seconds``; ``blocking`` does too, but blocks the whole server meanwhile (a synchronous
handler: it does not notice that its client went away until it is done); ``noisy`` writes a
traceback (``NOISY_TRACEBACK``) to stderr and exits mid-call. ``store`` and ``fetch`` make a stateful backend, kept in ``store.json``
beside the spec: ``store`` saves its arguments as a new record (with ``result``'s keys
written over them: a backend that answers "ok" but stored something else) and answers
``{"id": <new id>, "status": "ok"}``; ``fetch`` answers the record whose id is the ``id``
argument (an error when there is none). A test may edit ``store.json`` between calls.

A file ``kill-client-at-start`` beside the spec makes the next start kill the process that
started the server (canal, above its supervisor; with SIGKILL, before serving anything) and
remove the file: a client killed while its server starts.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from pathlib import Path

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


NOISY_TRACEBACK = """Traceback (most recent call last):
  File "/srv/tools/backend.py", line 212, in flush
    self.stream.write(payload)
BrokenPipeError: [Errno 32] Broken pipe
noisy: the backend connection is gone
"""


def build(spec_path: Path, name: str) -> Server:
    spec = json.loads(spec_path.read_text())
    tools = {t["name"]: t for t in spec["tools"]}
    page_size = spec.get("page_size", 100)
    calls = spec_path.with_name("calls.log")
    server: Server = Server(name)

    @server.list_tools()
    async def list_tools(request: types.ListToolsRequest) -> types.ListToolsResult:
        # The SDK itself calls this with None to fill its tool cache before a call.
        params = getattr(request, "params", None)
        start = int(params.cursor) if params is not None and params.cursor else 0
        page = list(tools.values())[start : start + page_size]
        listed = [types.Tool(name=t["name"], description=t.get("description"),
                             inputSchema=t.get("inputSchema", {"type": "object"}),
                             outputSchema=t.get("outputSchema"),
                             annotations=types.ToolAnnotations(**t["annotations"])
                             if "annotations" in t else None) for t in page]
        more = start + page_size < len(tools)
        return types.ListToolsResult(tools=listed,
                                     nextCursor=str(start + page_size) if more else None)

    @server.call_tool(validate_input=False)
    async def call_tool(tool: str, arguments: dict) -> object:
        with calls.open("a") as log:
            log.write(json.dumps({"server": name, "tool": tool, "arguments": arguments}) + "\n")
        entry = tools.get(tool)
        if entry is None:
            raise ValueError(f"Unknown tool: {tool}")
        behavior, result = entry.get("behavior", "echo"), entry.get("result")
        if behavior == "crash":
            os._exit(3)
        if behavior == "hang":
            await asyncio.sleep(3600)
        if behavior == "slow":
            await asyncio.sleep(entry.get("seconds", 5))
        if behavior == "blocking":
            time.sleep(entry.get("seconds", 5))
        if behavior == "noisy":
            sys.stderr.write(NOISY_TRACEBACK)
            sys.stderr.flush()
            os._exit(3)
        if behavior == "error":
            return types.CallToolResult(isError=True, content=[
                types.TextContent(type="text", text=str(result))])
        if behavior == "text":
            return [types.TextContent(type="text", text=json.dumps(result))]
        if behavior in ("store", "fetch"):
            return _stateful(spec_path.with_name("store.json"), behavior, arguments, result)
        if behavior == "plain":
            return [types.TextContent(type="text", text=str(result))]
        return {"tool": tool, "server": name, "arguments": arguments, **(result or {})}

    return server


def _stateful(path: Path, behavior: str, arguments: dict, result: dict | None) -> object:
    records = json.loads(path.read_text()) if path.exists() else {}
    if behavior == "fetch":
        record = records.get(str(arguments.get("id")))
        if record is None:
            return types.CallToolResult(isError=True, content=[
                types.TextContent(type="text", text=f"no record {arguments.get('id')!r}")])
        return record
    new_id = str(len(records) + 1)
    records[new_id] = {"id": new_id, **arguments, **(result or {})}
    path.write_text(json.dumps(records))
    return {"id": new_id, "status": "ok"}


def _client_pid() -> int:
    """The process that started this server: the parent, or the parent's parent when the
    parent is canal's supervisor (``canal.tools.supervisor``)."""
    parent = os.getppid()
    try:
        if b"supervisor.py" not in Path(f"/proc/{parent}/cmdline").read_bytes():
            return parent
        return int(Path(f"/proc/{parent}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except OSError:
        return parent


async def serve(spec_path: Path, name: str) -> None:
    server = build(spec_path, name)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main() -> None:
    spec_path, name = Path(sys.argv[1]), sys.argv[2]
    with spec_path.with_name("starts.log").open("a") as log:
        log.write(f"{name} {os.getpid()}\n")
    marker = spec_path.with_name("kill-client-at-start")
    if marker.exists():
        marker.unlink()
        os.kill(_client_pid(), signal.SIGKILL)
        return
    anyio.run(serve, spec_path, name)


if __name__ == "__main__":
    main()
