"""canal as an MCP server (``canal serve``, DESIGN.md §9): the agent-facing commands as MCP
tools, and each workflow as an MCP prompt.

The tools are those of ``canal.runtime.agent_tools.COMMANDS`` (one table, so this door and
the LangChain one never drift): ``index``, ``search``, ``meta``, ``call``, ``start``,
``advance``, ``plan``, ``current``, ``runs`` and ``abort``. Each tool's structured result
is exactly the JSON document the CLI prints for the same command, and its text content is
that document as JSON text. A refusal is the error document (``status: error`` with
``next``), never an MCP error, so the agent reads what to do next.

The server keeps no run state: every call goes through the one ``Canal`` of this process
over the store, so several servers and CLI processes can serve the same runs (one writer at
a time, canal's usual lock). Calls run one at a time in a worker thread, so the event loop
never blocks. The MCP tool servers stay connected between calls (started once,
not once per ``advance``) and end with this server. Under stdio, standard output belongs
to the protocol: ``serve_stdio`` moves anything else written to it (a tool's ``print``, a
child process) onto stderr.

When the client declares the elicitation capability, ``start`` or ``advance`` without data
at a step whose gate is a flat form asks the person directly (``canal.integrations.elicit``).
"""

from __future__ import annotations

import io
import json
import os
import sys
import threading
from typing import TYPE_CHECKING, Any

from canal.errors import UsageError
from canal.integrations.elicit import form_message, form_schema
from canal.runtime.agent_tools import ANSWERS, COMMANDS, respond

if TYPE_CHECKING:
    from mcp.server.lowlevel import Server

    from canal.runtime.canal import Canal

TOOLS = ("index", "search", "meta", "call", "start", "advance", "plan", "current", "runs",
         "abort")

INSTRUCTIONS = (
    "canal runs Markdown workflows step by step. Call index to see the workflows (then the "
    "tools; search ranks them for a task when there are many), start one by name, then do "
    "what the answer's step says and call advance with its gate's fields; every answer's "
    "next names the call to make. current takes a run up again from its thread_id alone.")


def prompt_text(name: str, description: str) -> str:
    """What the ``name`` prompt tells the agent: the task, and how to drive the run."""
    return (
        f"Run the canal workflow '{name}' ({description}).\n\n"
        f"1. Call the start tool with workflow \"{name}\". Keep the thread_id it answers.\n"
        "2. Read the answer's step: do its instructions, and collect the fields of its gate "
        "from the user.\n"
        "3. Call the tool that the answer's next names (usually advance, with thread_id and "
        "gate_data holding the gate's fields). Follow next after every answer.\n"
        "4. status rejected: nothing changed; fix the fields in errors and missing and "
        "advance again. status failed: ask the user, then advance with an action "
        "(retry, skip, abort). status completed or aborted: tell the user, you are done.\n"
        "In a later session, current with the thread_id gives the run back.")


def build_server(canal: Canal) -> Server:
    """An MCP server answering with ``canal``: the tools of ``TOOLS`` and one prompt per
    workflow."""
    import anyio.to_thread
    from mcp import types
    from mcp.server.lowlevel import Server

    from canal.spec.loader import describe_workflows

    server: Server = Server("canal", instructions=INSTRUCTIONS)
    one_at_a_time = threading.Lock()
    canal.keep_tool_sessions()  # a tool server starts once, not once per advance

    def answer(name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
        with one_at_a_time:
            return respond(canal, name, arguments)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        tools = []
        for name in TOOLS:
            description, model, _ = COMMANDS[name]
            tools.append(types.Tool(name=name, description=f"{description}\n{ANSWERS}",
                                    inputSchema=model.model_json_schema()))
        return tools

    # The arguments are checked by the command's model, so a bad one is an error document.
    @server.call_tool(validate_input=False)
    async def call_tool(name: str, arguments: dict[str, Any] | None
                        ) -> tuple[list[types.TextContent], dict[str, Any]]:
        if name not in TOOLS:
            document = UsageError(f"no tool named {name!r} (known: {', '.join(TOOLS)})"
                                  ).to_json()
        else:
            document = await with_form(name, arguments or {})
        text = json.dumps(document, ensure_ascii=False, allow_nan=False)
        return [types.TextContent(type="text", text=text)], document

    async def run(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return await anyio.to_thread.run_sync(answer, name, arguments)

    async def with_form(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """``name``'s document; for start, or advance without data, at a step the person
        can answer in a form, the person is asked first (``canal.integrations.elicit``)."""
        session = server.request_context.session
        asks = name == "start" or (name == "advance" and arguments.get("gate_data") is None)
        if not asks or not session.check_client_capability(
                types.ClientCapabilities(elicitation=types.ElicitationCapability())):
            return await run(name, arguments)
        if name == "start":
            document = await run(name, arguments)
        else:
            document = await run("current", {"thread_id": arguments.get("thread_id")})
        schema = form_schema(document)
        at = (document.get("step") or {}).get("id")
        if schema is None or arguments.get("step") not in (None, at):
            return document if name == "start" else await run(name, arguments)
        reply = await session.elicit(form_message(document), schema,
                                     related_request_id=server.request_context.request_id)
        if reply.action != "accept":  # declined or cancelled: the run stays where it was
            return document
        return await run("advance", {"thread_id": document["thread_id"],
                                     "gate_data": dict(reply.content or {}), "step": at})

    def workflows() -> dict[str, str]:
        return dict(describe_workflows(canal.settings.workflows))

    @server.list_prompts()
    async def list_prompts() -> list[types.Prompt]:
        found = await anyio.to_thread.run_sync(workflows)
        return [types.Prompt(name=name, description=f"run {name}: {description}")
                for name, description in found.items()]

    @server.get_prompt()
    async def get_prompt(name: str, arguments: dict[str, str] | None
                         ) -> types.GetPromptResult:
        found = await anyio.to_thread.run_sync(workflows)
        if name not in found:
            raise ValueError(f"no workflow named {name!r} (known: {', '.join(found)})")
        return types.GetPromptResult(
            description=f"run {name}: {found[name]}",
            messages=[types.PromptMessage(role="user", content=types.TextContent(
                type="text", text=prompt_text(name, found[name])))])

    return server


async def serve_stdio(canal: Canal) -> None:
    """Serve over this process's stdin and stdout until the client closes stdin."""
    from anyio import wrap_file
    from mcp.server.stdio import stdio_server

    # The protocol keeps the real stdout; file descriptor 1 (and sys.stdout) become stderr,
    # so a stray print, here or in a child process, cannot corrupt the stream.
    sys.stdout.flush()
    protocol = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    out = wrap_file(io.TextIOWrapper(protocol, encoding="utf-8", write_through=True))
    server = build_server(canal)
    async with stdio_server(stdout=out) as (read, write):
        await server.run(read, write, server.create_initialization_options())


async def serve_http(canal: Canal, port: int) -> None:
    """Serve streamable HTTP on ``http://127.0.0.1:PORT/mcp`` until interrupted."""
    import uvicorn
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.applications import Starlette
    from starlette.routing import Route

    manager = StreamableHTTPSessionManager(app=build_server(canal))
    app = Starlette(routes=[Route("/mcp", endpoint=_Endpoint(manager))],
                    lifespan=lambda _app: manager.run())
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    await uvicorn.Server(config).serve()


class _Endpoint:
    """The ASGI app of ``/mcp`` (a class, so Starlette hands it the raw request)."""

    def __init__(self, manager: Any) -> None:
        self.manager = manager

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.manager.handle_request(scope, receive, send)


def client_config(canal: Canal) -> dict[str, Any]:
    """The ``mcpServers`` entry that starts this server, with absolute paths: this Python,
    ``-m canal serve``, the workflows and state folders, the ``.mcp.json``, the store when
    it is not the default one (a flag or the environment chose it, and the client passes
    neither on) and the working directory."""
    settings = canal.settings
    args = ["-m", "canal", "serve", "--workflows", str(settings.workflows.resolve()),
            "--home", str(settings.home.resolve()),
            "--mcp-config", str(settings.mcp_config.resolve())]
    store = settings.checkpointer
    if isinstance(store, str) and store != f"sqlite:///{settings.home / 'state.db'}":
        args += ["--checkpointer", store]
    return {"mcpServers": {"canal": {"command": sys.executable, "args": args,
                                     "cwd": os.getcwd()}}}
