"""``canal serve``: an MCP client from the SDK drives workflows through a real server
process, over stdio and over streamable HTTP."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client

from tests.conftest import (
    CLEARED_ENV,
    ROOT,
    TOOLS_MODULE,
    Cli,
    Toolbox,
    project_steps,
    schema,
    tool_calls,
    write_workflow,
)

pytestmark = pytest.mark.timeout(120)

TOOLS = {"index", "search", "meta", "call", "start", "advance", "plan", "current", "runs", "abort"}
GOOD = {"project_name": "billing", "host": "billing.example.com"}


def environment(project: Path) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project), str(ROOT)]),
           "PYTHONDONTWRITEBYTECODE": "1"}
    for name in CLEARED_ENV:
        env.pop(name, None)
    return env


@contextlib.asynccontextmanager
async def over_stdio(project: Path, elicitation: Any = None, *options: str
                     ) -> AsyncIterator[ClientSession]:
    """A session with a new ``canal serve`` process in ``project``; ``options`` are more of
    its arguments (``--checkpointer URL``)."""
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "canal", "serve", *options],
                                   cwd=str(project), env=environment(project))
    with (project / "server-stderr.log").open("a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), \
                ClientSession(read, write, elicitation_callback=elicitation) as session:
            await session.initialize()
            yield session


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def http_server(project: Path) -> Any:
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "canal", "serve", "--http", str(port)],
                            cwd=project, env=environment(project),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"canal serve --http did not start: "
                                f"{proc.stderr.read().decode() if proc.stderr else ''}")
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


@contextlib.asynccontextmanager
async def over_http(url: str, elicitation: Any = None) -> AsyncIterator[ClientSession]:
    async with streamable_http_client(url) as (read, write, _), \
            ClientSession(read, write, elicitation_callback=elicitation) as session:
        await session.initialize()
        yield session


async def call(session: ClientSession, name: str, **arguments: Any) -> dict[str, Any]:
    """The structured result of tool ``name``, checked to equal its text content."""
    result = await session.call_tool(name, arguments)
    assert not result.isError, result
    document = result.structuredContent
    assert document is not None
    assert json.loads(result.content[0].text) == document  # type: ignore[union-attr]
    return document


async def drive(open_session: Any, project: Path) -> None:
    """Start in one session, be rejected, then finish from a new session by thread id."""
    async with open_session() as session:
        listed = await session.list_tools()
        assert {tool.name for tool in listed.tools} == TOOLS
        index = await call(session, "index")
        assert index["workflows"] == ["create-project: the create-project workflow"]
        started = await call(session, "start", workflow="create-project", thread_id="t1")
        assert started["status"] == "awaiting_input"
        assert started["step"]["id"] == "collect-project-info"
        rejected = await call(session, "advance", thread_id="t1",
                              gate_data={"project_name": "billing", "host": "NOT A HOST"})
        assert rejected["status"] == "rejected" and rejected["errors"]
        unknown = await call(session, "current", thread_id="no-such-run")
        assert unknown["status"] == "error" and "next" in unknown
    assert tool_calls(project) == []
    async with open_session() as session:  # a new server process: the run is in the store
        current = await call(session, "current", thread_id="t1")
        assert current["step"]["id"] == "collect-project-info"
        summary = await call(session, "advance", thread_id="t1", gate_data=GOOD)
        assert summary["status"] == "awaiting_input" and summary["step"]["id"] == "summary"
        done = await call(session, "advance", thread_id="t1")
        assert done["status"] == "completed"
        runs = await call(session, "runs", status="completed")
        assert [run["thread_id"] for run in runs["runs"]] == ["t1"]
    assert [name for name, _ in tool_calls(project)] == ["create_project", "create_role"]


def test_a_workflow_runs_to_completion_over_stdio(project: Path, cli: Cli) -> None:
    anyio.run(drive, lambda: over_stdio(project), project)

    async def read() -> tuple[dict[str, Any], dict[str, Any]]:
        async with over_stdio(project) as session:
            return await call(session, "current", thread_id="t1"), await call(session, "index")

    current, index = anyio.run(read)
    assert current == cli("current", "t1").json  # the very document the CLI prints
    assert index == cli("index").json
    assert "Traceback" not in (project / "server-stderr.log").read_text()


def test_search_is_a_tool_that_answers_what_the_cli_prints(project: Path, cli: Cli) -> None:
    async def go() -> tuple[dict[str, Any], dict[str, Any]]:
        async with over_stdio(project) as session:
            listed = {tool.name: tool for tool in (await session.list_tools()).tools}
            schema = listed["search"].inputSchema
            assert set(schema["properties"]) == {"query", "limit"}
            assert schema["required"] == ["query"]
            return (await call(session, "search", query="project host", limit=1),
                    await call(session, "search", query="nothing like it"))

    found, nothing = anyio.run(go)
    assert found["workflows"] == ["create-project: the create-project workflow"]
    assert found == cli("search", "project host", "--limit", "1").json
    assert nothing["workflows"] == nothing["tools"] == [] and nothing["status"] == "ok"


def test_a_workflow_runs_to_completion_over_http(project: Path) -> None:
    with http_server(project) as url:
        anyio.run(drive, lambda: over_http(url), project)


# create_project waits inside its call, so inside the run's writer lock, until the test
# lets it go: a second writer arrives while the first is certainly at work.
HOLDING_TOOLS = TOOLS_MODULE.replace("def create_project(**kwargs):\n", """\
def create_project(**kwargs):
    import time
    here = pathlib.Path(__file__).parent
    (here / "inside").touch()
    deadline = time.monotonic() + 60
    while not (here / "release").exists() and time.monotonic() < deadline:
        time.sleep(0.02)
""")


def test_two_servers_on_one_store_serve_one_run_with_one_writer(
        project: Path, cli: Cli, store_args: list[str]) -> None:
    (project / "project_tools.py").write_text(HOLDING_TOOLS)
    first = {"project_name": "first", "host": "first.example.com"}
    second = {"project_name": "second", "host": "second.example.com"}
    won: dict[str, Any] = {}

    async def advance_first(session: ClientSession) -> None:
        won.update(await call(session, "advance", thread_id="t", gate_data=first))

    async def go() -> None:
        async with over_stdio(project, None, *store_args) as one, \
                over_stdio(project, None, *store_args) as two:
            started = await call(one, "start", workflow="create-project", thread_id="t")
            before = await call(two, "current", thread_id="t")  # the other server reads it
            assert before["step"] == started["step"]
            async with anyio.create_task_group() as group:
                group.start_soon(advance_first, one)
                with anyio.fail_after(30):
                    while not (project / "inside").exists():
                        await anyio.sleep(0.02)
                lost = await call(two, "advance", thread_id="t", gate_data=second)
                assert lost["error"]["code"] == "conflict"
                assert lost == cli(*store_args, "advance", "t", "--gate-data",
                                   json.dumps(second)).json  # the CLI's very document
                held = await call(two, "current", thread_id="t")
                assert [step["data"]["project_name"] for step in held["completed"]] == [
                    "first"]  # the loser's answer changed nothing
                assert held["errors"][0]["message"].startswith(
                    "another process is running this step right now")  # not "stopped"
                (project / "release").touch()
            assert won["status"] == "awaiting_input" and won["step"]["id"] == "summary"
            now = await call(two, "current", thread_id="t")
            assert [step["step"] for step in now["completed"]] == [
                "collect-project-info", "create-project", "create-role"]
            assert now["completed"][0]["data"]["project_name"] == "first"
            done = await call(two, "advance", thread_id="t")  # the other server finishes it
            assert done["status"] == "completed"
            assert await call(one, "current", thread_id="t") == \
                await call(two, "current", thread_id="t")

    anyio.run(go)
    assert [(name, kwargs.get("name")) for name, kwargs in tool_calls(project)] == [
        ("create_project", "first"), ("create_role", None)]


def test_a_tool_that_prints_does_not_corrupt_the_stdio_stream(project: Path) -> None:
    tools = project / "project_tools.py"
    tools.write_text(tools.read_text().replace(
        "def create_project(**kwargs):\n",
        "def create_project(**kwargs):\n    print('chatty tool')\n"
        "    import os; os.system('echo chatty child')\n"))

    async def go() -> None:
        async with over_stdio(project) as session:
            await call(session, "start", workflow="create-project", thread_id="p")
            summary = await call(session, "advance", thread_id="p", gate_data=GOOD)
            assert summary["step"]["id"] == "summary"

    anyio.run(go)
    stderr = (project / "server-stderr.log").read_text()
    assert "chatty tool" in stderr and "chatty child" in stderr


def test_a_tool_server_starts_once_for_every_advance_and_call_of_a_server(
        project: Path, cli: Cli, toolbox: Toolbox) -> None:
    toolbox.add("alpha", [{"name": "make", "inputSchema": schema("name", name="string")}])
    write_workflow(project / "workflows", "remote", {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "name": {"type": "string", "required": True}}}},
        "02-make.md": {"type": "automated", "automation": {
            "tool": "make", "input_mapping": {"name": "{{gate.ask.name}}"}}}})
    assert cli("discover").json["status"] == "ok"
    starts = toolbox.starts("alpha")

    async def go() -> None:
        async with over_stdio(project) as session:
            for thread in ("a", "b", "c"):
                await call(session, "start", workflow="remote", thread_id=thread)
                done = await call(session, "advance", thread_id=thread, gate_data={"name": thread})
                assert done["status"] == "completed", done
            for name in ("d", "e"):  # the call tool keeps its session too
                made = await call(session, "call", tool="make", args={"name": name})
                assert made["status"] == "ok", made

    anyio.run(go)
    assert toolbox.starts("alpha") == starts + 2  # one for the runs, one for canal call
    assert [c["arguments"]["name"] for c in toolbox.calls("alpha")] == ["a", "b", "c", "d", "e"]


def test_bad_arguments_and_unknown_tools_answer_the_error_document(project: Path) -> None:
    async def go() -> None:
        async with over_stdio(project) as session:
            bad = await call(session, "start", workflow=3)
            assert bad["status"] == "error" and bad["error"]["code"] == "usage"
            missing = await call(session, "start", workflow="nope")
            assert missing["status"] == "error" and missing["error"]["code"] == "unknown_workflow"
            blank = await call(session, "search", query="  ")
            assert blank["status"] == "error" and blank["error"]["code"] == "usage"
            none = await call(session, "search", query="x", limit=0)
            assert none["status"] == "error" and "at least 1" in none["error"]["message"]
            unknown = await call(session, "discover")
            assert unknown["status"] == "error" and unknown["error"]["code"] == "usage"

    anyio.run(go)


def test_each_workflow_is_a_prompt(project: Path) -> None:
    write_workflow(project / "workflows", "second", project_steps(),
                   entry={"name": "second", "description": "another one"})

    async def go() -> None:
        async with over_stdio(project) as session:
            prompts = {p.name: p.description for p in (await session.list_prompts()).prompts}
            assert prompts == {"create-project": "run create-project: the create-project "
                                                 "workflow",
                               "second": "run second: another one"}
            got = await session.get_prompt("second")
            text = got.messages[0].content.text  # type: ignore[union-attr]
            assert 'workflow "second"' in text and "next" in text

    anyio.run(go)


def test_print_config_gives_absolute_paths_that_run(project: Path, tmp_path: Path) -> None:
    printed = subprocess.run([sys.executable, "-m", "canal", "serve", "--print-config"],
                             cwd=project, env=environment(project), capture_output=True,
                             text=True, timeout=60, check=True)
    entry = json.loads(printed.stdout)["mcpServers"]["canal"]
    assert Path(entry["command"]).is_absolute() and Path(entry["cwd"]) == project.resolve()
    args = entry["args"]
    assert args[:3] == ["-m", "canal", "serve"]
    for flag in ("--workflows", "--home", "--mcp-config"):
        assert Path(args[args.index(flag) + 1]).is_absolute()
    assert args[args.index("--workflows") + 1] == str((project / "workflows").resolve())
    assert "--checkpointer" not in args  # the default store: under --home
    other = f"sqlite:///{tmp_path / 'other' / 'state.db'}"
    chosen = Cli(project, {**environment(project), "CANAL_CHECKPOINTER": other})
    chosen_args = chosen("serve", "--print-config").json["mcpServers"]["canal"]["args"]
    assert chosen_args[chosen_args.index("--checkpointer") + 1] == other

    elsewhere = tmp_path / "elsewhere"  # the paths work from any directory
    elsewhere.mkdir()

    async def go() -> None:
        params = StdioServerParameters(command=entry["command"], args=args, cwd=entry["cwd"],
                                       env=environment(project))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            index = await call(s, "index")
            assert index["workflows"] == ["create-project: the create-project workflow"]

    anyio.run(go)


FLAT = {"01-ask.md": ({"type": "interactive", "gate": {"schema": {
            "project_name": {"type": "string", "required": True, "desc": "Project name"},
            "host": {"type": "string", "required": True, "pattern": r"^[a-z0-9.-]+\.[a-z]{2,}$"},
            "size": {"type": "string", "enum": ["s", "m"], "default": "s"}}}},
            "Ask for the project."),
        "02-done.md": ({"type": "notification"}, "Hello {{gate.ask.project_name}}.")}


class Person:
    """An elicitation callback answering each form with the next of ``replies``."""

    def __init__(self, *replies: tuple[str, dict[str, Any] | None]) -> None:
        self.replies = list(replies)
        self.forms: list[tuple[str, dict[str, Any]]] = []

    async def __call__(self, context: Any, params: Any) -> Any:
        from mcp import types

        self.forms.append((params.message, params.requestedSchema))
        action, content = self.replies.pop(0)
        return types.ElicitResult(action=action, content=content)  # type: ignore[arg-type]


def test_a_client_that_can_elicit_gets_the_gate_as_a_form(project: Path) -> None:
    write_workflow(project / "workflows", "flat", FLAT)
    person = Person(("decline", None), ("accept", {"project_name": "b", "host": "NOT"}),
                    ("accept", GOOD))

    async def go() -> None:
        async with over_stdio(project, person) as session:
            declined = await call(session, "start", workflow="flat", thread_id="f")
            assert declined["status"] == "awaiting_input" and declined["step"]["id"] == "ask"
            rejected = await call(session, "advance", thread_id="f")
            assert rejected["status"] == "rejected" and rejected["step"]["id"] == "ask"
            accepted = await call(session, "advance", thread_id="f")
            assert accepted["status"] == "awaiting_input"
            assert accepted["step"]["id"] == "done"  # a notification is no form
            done = await call(session, "advance", thread_id="f")
            assert done["status"] == "completed"
            await call(session, "start", workflow="create-project", thread_id="p")

    anyio.run(go)
    assert len(person.forms) == 3  # the project workflow's array field is no form
    message, schema = person.forms[0]
    assert message == "Ask for the project."
    assert schema["required"] == ["project_name", "host"]
    assert schema["properties"]["size"] == {"type": "string", "enum": ["s", "m"],
                                            "default": "s"}
    assert schema["properties"]["project_name"]["description"] == "Project name"


def test_a_client_over_http_answers_the_gate_in_a_form(project: Path) -> None:
    write_workflow(project / "workflows", "flat", FLAT)
    person = Person(("accept", GOOD))

    async def go(url: str) -> None:
        async with over_http(url, person) as session:
            accepted = await call(session, "start", workflow="flat", thread_id="f")
            assert accepted["status"] == "awaiting_input" and accepted["step"]["id"] == "done"
            done = await call(session, "advance", thread_id="f")
            assert done["status"] == "completed"

    with http_server(project) as url:
        anyio.run(go, url)
    assert [message for message, _ in person.forms] == ["Ask for the project."]


def test_a_client_without_elicitation_is_never_asked(project: Path) -> None:
    write_workflow(project / "workflows", "flat", FLAT)

    async def go() -> None:
        async with over_stdio(project) as session:
            started = await call(session, "start", workflow="flat", thread_id="f")
            assert started["status"] == "awaiting_input" and started["step"]["id"] == "ask"
            rejected = await call(session, "advance", thread_id="f")
            assert rejected["status"] == "rejected"

    anyio.run(go)
