"""The permission platform example server, driven as a real subprocess over stdio.

No mocks: every test starts ``examples/permission_platform/server.py`` with
``sys.executable`` and talks to it with the ``mcp`` client. pytest-asyncio is not
installed, so each test runs its session with ``asyncio.run`` under a timeout.
"""

import asyncio
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "examples" / "permission_platform" / "server.py"
SESSION_TIMEOUT = 30
AUTH_CODES = "0-pre-auth,1-SDK,2-openapi,3-not-integrated"

PROJECT_KEYS = {"id", "name", "host", "auth_mode", "admins", "insert_time", "update_time",
                "update_admin"}


def run_session(body: Callable[[ClientSession], Awaitable[Any]], *, args: list[str],
                env: dict[str, str] | None = None, cwd: Path | None = None) -> Any:
    """Start the server, initialise a client session, run ``body`` on it, stop the server."""

    async def go() -> Any:
        params = StdioServerParameters(command=sys.executable, args=[str(SERVER), *args],
                                       env=env, cwd=cwd)
        async with stdio_client(params) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                return await body(session)

    return asyncio.run(asyncio.wait_for(go(), SESSION_TIMEOUT))


def db_args(path: Path) -> list[str]:
    return ["--db", str(path)]


async def ok(session: ClientSession, tool: str, arguments: dict[str, Any] | None = None
             ) -> dict[str, Any]:
    """Call ``tool``, insist it succeeded, and return its structured content."""
    result = await session.call_tool(tool, arguments or {})
    assert not result.isError, f"{tool} failed: {text_of(result)}"
    assert result.structuredContent is not None, f"{tool} returned no structuredContent"
    return result.structuredContent


async def refused(session: ClientSession, tool: str, arguments: dict[str, Any]) -> str:
    """Call ``tool``, insist it was refused as a tool error, and return the message."""
    result = await session.call_tool(tool, arguments)
    assert result.isError is True, f"{tool}({arguments}) was not refused: {result}"
    return text_of(result)


def text_of(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def billing(**overrides: Any) -> dict[str, Any]:
    project = {"name": "billing", "host": "billing.example.com", "auth_mode": 1,
               "admins": "alice, bob"}
    project.update(overrides)
    return project


# -- listing and schemas --------------------------------------------------------------


def test_tools_annotations_and_input_schema(tmp_path: Path) -> None:
    async def body(session: ClientSession) -> Any:
        return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in run_session(body, args=db_args(tmp_path / "p.db"))}
    assert set(tools) == {"create_project", "create_role", "list_projects", "get_project",
                          "delete_project"}

    for tool in tools.values():
        # a tool index shows only the first line: it must be a real sentence
        first_line = (tool.description or "").splitlines()[0]
        assert len(first_line) > 15 and first_line.endswith("."), (tool.name, first_line)
        assert tool.outputSchema is not None, f"{tool.name} has no output schema"

    def hints(name: str) -> tuple[Any, Any]:
        annotations = tools[name].annotations
        assert annotations is not None, f"{name} has no annotations"
        return annotations.readOnlyHint, annotations.destructiveHint

    assert hints("list_projects")[0] is True
    assert hints("get_project")[0] is True
    assert hints("delete_project") == (False, True)
    for creator in ("create_project", "create_role"):
        read_only, destructive = hints(creator)
        assert read_only is not True, creator
        assert destructive is not True, creator  # no destructive hint on additive tools
        assert destructive is False, creator  # said explicitly: absent means "maybe" in MCP

    schema = tools["create_project"].inputSchema
    props = schema["properties"]
    assert set(schema["required"]) == {"name", "host", "auth_mode", "admins"}
    for system_field in ("id", "insert_time", "update_time", "update_admin"):
        assert system_field in props, system_field
        assert "system-managed" in props[system_field]["description"], system_field
    assert props["id"]["description"] == "Record id (system-managed)"
    assert props["insert_time"]["description"] == "Creation time (system-managed)"
    assert AUTH_CODES in props["auth_mode"]["description"]
    assert props["auth_mode"]["description"] == f"Authentication mode: {AUTH_CODES}"
    assert props["admins"]["description"] == "Administrator user names, comma separated"
    assert props["host"]["description"] == "Service domain, e.g. billing.example.com"

    role_schema = tools["create_role"].inputSchema
    assert set(role_schema["required"]) == {"project_id", "role_name"}
    assert "permissions" in role_schema["properties"]


# -- the story: create a project, then a role in it --------------------------------------


def test_project_and_role_lifecycle(tmp_path: Path) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        seen: dict[str, Any] = {}
        # a client-supplied id and insert_time are ignored
        seen["created"] = await ok(session, "create_project", billing(
            id=999, insert_time="1999-01-01T00:00:00Z", update_admin="mallory"))
        pid = seen["created"]["id"]
        seen["role"] = await ok(session, "create_role", {
            "project_id": pid, "role_name": "viewer", "permissions": ["orders:read"]})
        seen["bare_role"] = await ok(session, "create_role",
                                     {"project_id": pid, "role_name": "auditor"})
        seen["dup_role"] = await refused(session, "create_role",
                                         {"project_id": pid, "role_name": "viewer"})
        seen["fetched"] = await ok(session, "get_project", {"project_id": pid})
        seen["other"] = await ok(session, "create_project", billing(
            name="ledger", host="Ledger.Example.org", auth_mode=0, admins="carol"))
        seen["listed"] = await ok(session, "list_projects")
        seen["deleted"] = await ok(session, "delete_project", {"project_id": pid})
        seen["after_delete"] = await refused(session, "get_project", {"project_id": pid})
        seen["listed_after"] = await ok(session, "list_projects")
        # the raw result also carries the JSON as text for clients without structured output
        raw = await session.call_tool("list_projects", {})
        seen["text"] = text_of(raw)
        return seen

    seen = run_session(body, args=db_args(tmp_path / "p.db"))

    created = seen["created"]
    assert set(created) == PROJECT_KEYS
    assert created["id"] != 999 and isinstance(created["id"], int)
    assert created["name"] == "billing"
    assert created["host"] == "billing.example.com"
    assert created["auth_mode"] == 1
    assert created["admins"] == ["alice", "bob"]
    assert created["insert_time"] != "1999-01-01T00:00:00Z"
    assert created["insert_time"] == created["update_time"]
    assert created["update_admin"] == "canal"

    pid = created["id"]
    role = seen["role"]
    assert role == {"id": role["id"], "project_id": pid, "role_name": "viewer",
                    "permissions": ["orders:read"]}
    assert seen["bare_role"]["permissions"] == []
    assert f"already has a role named 'viewer' (id {role['id']})" in seen["dup_role"]

    fetched = seen["fetched"]
    assert {k: fetched[k] for k in ("id", "name", "host", "admins")} == {
        "id": pid, "name": "billing", "host": "billing.example.com", "admins": ["alice", "bob"]}
    assert [r["role_name"] for r in fetched["roles"]] == ["viewer", "auditor"]
    assert fetched["roles"][0] == role

    assert seen["other"]["host"] == "ledger.example.org"  # domains are stored lower case
    assert [p["name"] for p in seen["listed"]["projects"]] == ["billing", "ledger"]
    assert all(set(p) == PROJECT_KEYS for p in seen["listed"]["projects"])

    assert seen["deleted"] == {"deleted": pid}
    assert f"no project with id {pid}; list_projects shows the ids" in seen["after_delete"]
    assert [p["name"] for p in seen["listed_after"]["projects"]] == ["ledger"]
    assert '"ledger"' in seen["text"]


def test_refusals_say_what_is_wrong(tmp_path: Path) -> None:
    async def body(session: ClientSession) -> dict[str, str]:
        first = await ok(session, "create_project", billing())
        messages = {"existing_id": str(first["id"])}
        messages["duplicate"] = await refused(session, "create_project",
                                              billing(host="other.example.com"))
        for label, host in (("spaces", "not a domain"), ("url", "http://x.com"),
                            ("no_dot", "localhost"), ("numeric_tld", "billing.example.123")):
            messages[label] = await refused(session, "create_project",
                                            billing(name=f"p-{label}", host=host))
        messages["auth_mode"] = await refused(session, "create_project",
                                              billing(name="p-auth", auth_mode=7))
        messages["empty_name"] = await refused(session, "create_project", billing(name="  "))
        messages["no_admins"] = await refused(session, "create_project",
                                              billing(name="p-admins", admins=" , "))
        messages["role_project"] = await refused(session, "create_role",
                                                 {"project_id": 9, "role_name": "viewer"})
        messages["role_name"] = await refused(session, "create_role",
                                              {"project_id": first["id"], "role_name": ""})
        messages["get"] = await refused(session, "get_project", {"project_id": 9})
        messages["delete"] = await refused(session, "delete_project", {"project_id": 9})
        # nothing refused was stored
        messages["names"] = ",".join(
            p["name"] for p in (await ok(session, "list_projects"))["projects"])
        return messages

    m = run_session(body, args=db_args(tmp_path / "p.db"))

    assert f"a project named 'billing' already exists (id {m['existing_id']})" in m["duplicate"]
    assert ("host 'not a domain' is not a domain name "
            "(expected something like billing.example.com") in m["spaces"]
    assert "host 'http://x.com' is not a domain name" in m["url"]
    assert "without a scheme" in m["url"]
    assert "host 'localhost' is not a domain name" in m["no_dot"]
    assert "expected something like billing.example.com" in m["no_dot"]
    assert "host 'billing.example.123' is not a domain name" in m["numeric_tld"]
    assert "auth_mode 7" in m["auth_mode"] and AUTH_CODES in m["auth_mode"]
    assert "name must not be empty" in m["empty_name"]
    assert "at least one administrator" in m["no_admins"]
    assert "no project with id 9; list_projects shows the ids" in m["role_project"]
    assert "role_name must not be empty" in m["role_name"]
    assert "no project with id 9; list_projects shows the ids" in m["get"]
    assert "no project with id 9; list_projects shows the ids" in m["delete"]
    assert m["names"] == "billing"


# -- where the data lives ---------------------------------------------------------------


def test_data_persists_across_server_processes(tmp_path: Path) -> None:
    db = tmp_path / "nested" / "dir" / "p.db"  # parent folders are created

    async def first(session: ClientSession) -> dict[str, Any]:
        project = await ok(session, "create_project", billing())
        await ok(session, "create_role", {"project_id": project["id"], "role_name": "admin",
                                          "permissions": ["*"]})
        return project

    async def second(session: ClientSession) -> dict[str, Any]:
        return await ok(session, "list_projects")

    project = run_session(first, args=db_args(db))
    assert db.is_file()
    listed = run_session(second, args=db_args(db))
    # Creating the role touched the project's update_time (it may have ticked a second).
    [stored] = listed["projects"]
    assert stored["update_time"] >= project["update_time"]
    assert {k: v for k, v in stored.items() if k != "update_time"} == {
        k: v for k, v in project.items() if k != "update_time"}

    async def third(session: ClientSession) -> tuple[dict[str, Any], str]:
        fetched = await ok(session, "get_project", {"project_id": project["id"]})
        dup = await refused(session, "create_project", billing())
        return fetched, dup

    fetched, dup = run_session(third, args=db_args(db))
    assert [(r["role_name"], r["permissions"]) for r in fetched["roles"]] == [("admin", ["*"])]
    assert "a project named 'billing' already exists" in dup


def test_env_var_names_the_database_when_db_is_absent(tmp_path: Path) -> None:
    db = tmp_path / "from-env" / "platform.db"
    cwd = tmp_path / "cwd"
    cwd.mkdir()

    async def body(session: ClientSession) -> dict[str, Any]:
        return await ok(session, "create_project", billing())

    run_session(body, args=[], env={"PERMISSION_PLATFORM_DB": str(db)}, cwd=cwd)
    assert db.is_file()
    assert not (cwd / "permission-platform.db").exists()

    async def check(session: ClientSession) -> dict[str, Any]:
        return await ok(session, "list_projects")

    # --db wins over the environment variable
    other = tmp_path / "flag.db"
    listed = run_session(check, args=db_args(other), env={"PERMISSION_PLATFORM_DB": str(db)})
    assert listed == {"projects": []}
    assert other.is_file()


def test_default_database_is_in_the_current_directory(tmp_path: Path) -> None:
    async def body(session: ClientSession) -> dict[str, Any]:
        return await ok(session, "list_projects")

    # env=None gives the SDK's minimal default environment, so no PERMISSION_PLATFORM_DB
    assert run_session(body, args=[], cwd=tmp_path) == {"projects": []}
    assert (tmp_path / "permission-platform.db").is_file()
