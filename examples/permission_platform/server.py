"""Permission platform: an example MCP server backed by SQLite.

The story it models: an agent creates a *project* on a permission platform (a service,
its domain, how it authenticates and who administers it), then creates *roles* in that
project. The tools validate their input and answer with messages that say what is wrong
and how to fix it, so an agent can correct itself.

Run it over stdio::

    python examples/permission_platform/server.py [--db PATH]

The database path comes from ``--db``, else the ``PERMISSION_PLATFORM_DB`` environment
variable, else ``permission-platform.db`` in the current directory.
"""

import argparse
import inspect
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Annotated, Any

from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations
from pydantic import Field

# Before Python 3.12 pydantic refuses a typing.TypedDict nested in another type (as in
# list[Project]), so registering the tools would fail; typing_extensions' works everywhere.
from typing_extensions import TypedDict

DB_ENV_VAR = "PERMISSION_PLATFORM_DB"
DEFAULT_DB = "permission-platform.db"
UPDATE_ADMIN = "canal"

AUTH_MODES = {0: "pre-auth", 1: "SDK", 2: "openapi", 3: "not-integrated"}
AUTH_MODE_CODES = ",".join(f"{code}-{label}" for code, label in AUTH_MODES.items())
HOST_EXAMPLE = "billing.example.com"

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST_RE = re.compile(rf"^(?:{_LABEL}\.)+[A-Za-z]{{2,63}}$")

SCHEMA = """
CREATE TABLE IF NOT EXISTS projects (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    name         TEXT NOT NULL UNIQUE,
    host         TEXT NOT NULL,
    auth_mode    INTEGER NOT NULL,
    admins       TEXT NOT NULL,
    insert_time  TEXT NOT NULL,
    update_time  TEXT NOT NULL,
    update_admin TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS roles (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    project_id  INTEGER NOT NULL REFERENCES projects(id) ON DELETE CASCADE,
    role_name   TEXT NOT NULL,
    permissions TEXT NOT NULL,
    UNIQUE (project_id, role_name)
);
"""


class Project(TypedDict):
    id: int
    name: str
    host: str
    auth_mode: int
    admins: list[str]
    insert_time: str
    update_time: str
    update_admin: str


class Role(TypedDict):
    id: int
    project_id: int
    role_name: str
    permissions: list[str]


class ProjectWithRoles(Project):
    roles: list[Role]


class ProjectList(TypedDict):
    projects: list[Project]


class Deleted(TypedDict):
    deleted: int


class PlatformError(ValueError):
    """A request the platform refuses; the message says what is wrong and how to fix it."""


def _now() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def check_host(host: str) -> str:
    """Return ``host`` normalised (stripped, lower case), or raise if it is no domain name."""
    candidate = host.strip()
    if len(candidate) <= 253 and _HOST_RE.match(candidate):
        return candidate.lower()
    hint = f"expected something like {HOST_EXAMPLE}"
    if "://" in candidate:
        hint += "; give only the domain, without a scheme such as http://"
    raise PlatformError(f"host {host!r} is not a domain name ({hint})")


def check_auth_mode(auth_mode: int) -> int:
    if isinstance(auth_mode, bool) or auth_mode not in AUTH_MODES:
        raise PlatformError(
            f"auth_mode {auth_mode!r} is not a known authentication mode; "
            f"use one of {AUTH_MODE_CODES}"
        )
    return auth_mode


def split_admins(admins: str) -> list[str]:
    names = [part.strip() for part in admins.split(",")]
    names = list(dict.fromkeys(name for name in names if name))
    if not names:
        raise PlatformError(
            "admins must name at least one administrator user name, comma separated "
            "(e.g. 'alice,bob')"
        )
    return names


class PermissionStore:
    """Projects and roles in one SQLite file; a fresh connection per operation."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._transaction() as conn:
            conn.executescript(SCHEMA)

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with closing(sqlite3.connect(self.path, timeout=10)) as conn:
            conn.row_factory = sqlite3.Row
            conn.execute("PRAGMA foreign_keys = ON")
            with conn:  # commit on success, roll back on error
                yield conn

    # -- projects -------------------------------------------------------------------

    def create_project(self, name: str, host: str, auth_mode: int, admins: str) -> Project:
        name = name.strip()
        if not name:
            raise PlatformError("name must not be empty; give the project a name such as 'billing'")
        host = check_host(host)
        auth_mode = check_auth_mode(auth_mode)
        admin_list = split_admins(admins)
        now = _now()
        with self._transaction() as conn:
            existing = conn.execute("SELECT id FROM projects WHERE name = ?", (name,)).fetchone()
            if existing is not None:
                raise PlatformError(
                    f"a project named {name!r} already exists (id {existing['id']}); "
                    "choose another name, or use get_project to look at that one"
                )
            cursor = conn.execute(
                "INSERT INTO projects (name, host, auth_mode, admins, insert_time, update_time,"
                " update_admin) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (name, host, auth_mode, json.dumps(admin_list), now, now, UPDATE_ADMIN),
            )
            row = conn.execute("SELECT * FROM projects WHERE id = ?", (cursor.lastrowid,)).fetchone()
        return _project(row)

    def list_projects(self) -> list[Project]:
        with self._transaction() as conn:
            rows = conn.execute("SELECT * FROM projects ORDER BY id").fetchall()
        return [_project(row) for row in rows]

    def get_project(self, project_id: int) -> ProjectWithRoles:
        with self._transaction() as conn:
            row = self._require_project(conn, project_id)
            roles = conn.execute(
                "SELECT * FROM roles WHERE project_id = ? ORDER BY id", (project_id,)
            ).fetchall()
        return {**_project(row), "roles": [_role(role) for role in roles]}

    def delete_project(self, project_id: int) -> int:
        with self._transaction() as conn:
            self._require_project(conn, project_id)
            conn.execute("DELETE FROM roles WHERE project_id = ?", (project_id,))
            conn.execute("DELETE FROM projects WHERE id = ?", (project_id,))
        return project_id

    # -- roles ----------------------------------------------------------------------

    def create_role(self, project_id: int, role_name: str,
                    permissions: list[str] | None = None) -> Role:
        role_name = role_name.strip()
        if not role_name:
            raise PlatformError(
                "role_name must not be empty; give the role a name such as 'viewer'"
            )
        perms = list(dict.fromkeys(p.strip() for p in (permissions or []) if p.strip()))
        with self._transaction() as conn:
            self._require_project(conn, project_id)
            existing = conn.execute(
                "SELECT id FROM roles WHERE project_id = ? AND role_name = ?",
                (project_id, role_name),
            ).fetchone()
            if existing is not None:
                raise PlatformError(
                    f"project {project_id} already has a role named {role_name!r} "
                    f"(id {existing['id']}); choose another role name"
                )
            cursor = conn.execute(
                "INSERT INTO roles (project_id, role_name, permissions) VALUES (?, ?, ?)",
                (project_id, role_name, json.dumps(perms)),
            )
            conn.execute(
                "UPDATE projects SET update_time = ?, update_admin = ? WHERE id = ?",
                (_now(), UPDATE_ADMIN, project_id),
            )
            row = conn.execute("SELECT * FROM roles WHERE id = ?", (cursor.lastrowid,)).fetchone()
        return _role(row)

    @staticmethod
    def _require_project(conn: sqlite3.Connection, project_id: int) -> sqlite3.Row:
        row = conn.execute("SELECT * FROM projects WHERE id = ?", (project_id,)).fetchone()
        if row is None:
            raise PlatformError(f"no project with id {project_id}; list_projects shows the ids")
        return row


def _project(row: sqlite3.Row) -> Project:
    return {
        "id": row["id"],
        "name": row["name"],
        "host": row["host"],
        "auth_mode": row["auth_mode"],
        "admins": json.loads(row["admins"]),
        "insert_time": row["insert_time"],
        "update_time": row["update_time"],
        "update_admin": row["update_admin"],
    }


def _role(row: sqlite3.Row) -> Role:
    return {
        "id": row["id"],
        "project_id": row["project_id"],
        "role_name": row["role_name"],
        "permissions": json.loads(row["permissions"]),
    }


# -- the MCP server ---------------------------------------------------------------------

READ_ONLY = ToolAnnotations(readOnlyHint=True)
# Absent destructiveHint means "may be destructive" in the MCP spec, so additive tools
# say explicitly that they are not.
ADDITIVE = ToolAnnotations(readOnlyHint=False, destructiveHint=False)
DESTRUCTIVE = ToolAnnotations(readOnlyHint=False, destructiveHint=True)

ProjectId = Annotated[int, Field(description="Id of the project (see list_projects)")]


def build_server(db_path: str | Path) -> FastMCP:
    """Open (and if needed create) the database at ``db_path`` and return the server."""
    store = PermissionStore(db_path)
    server = FastMCP(
        "permission-platform",
        instructions=(
            "A permission platform: create a project (create_project), then roles in it "
            "(create_role). list_projects and get_project read; delete_project removes a "
            "project and its roles."
        ),
        log_level="WARNING",  # stderr is the client's: keep per-request chatter out of it
    )

    def tool(title: str, annotations: ToolAnnotations) -> Callable[[Callable[..., Any]], Any]:
        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            # FastMCP uses the raw docstring; clean its indentation for the description.
            return server.tool(
                title=title,
                description=inspect.cleandoc(fn.__doc__ or ""),
                annotations=annotations,
                structured_output=True,
            )(fn)
        return register

    @tool("Create project", ADDITIVE)
    def create_project(
        name: Annotated[str, Field(description="Project name, unique on the platform")],
        host: Annotated[str, Field(description=f"Service domain, e.g. {HOST_EXAMPLE}")],
        auth_mode: Annotated[int, Field(description=f"Authentication mode: {AUTH_MODE_CODES}")],
        admins: Annotated[str, Field(description="Administrator user names, comma separated")],
        id: Annotated[int | None, Field(description="Record id (system-managed)")] = None,
        insert_time: Annotated[
            str | None, Field(description="Creation time (system-managed)")] = None,
        update_time: Annotated[
            str | None, Field(description="Last update time (system-managed)")] = None,
        update_admin: Annotated[
            str | None, Field(description="User who last updated the record (system-managed)")
        ] = None,
    ) -> Project:
        """Create a project on the permission platform and return it with its new id.

        The system-managed fields (id, insert_time, update_time, update_admin) are
        assigned by the platform; values given for them are ignored.
        """
        del id, insert_time, update_time, update_admin  # system-managed: ignored
        return store.create_project(name, host, auth_mode, admins)

    @tool("Create role", ADDITIVE)
    def create_role(
        project_id: ProjectId,
        role_name: Annotated[str, Field(description="Role name, unique within the project")],
        permissions: Annotated[
            list[str] | None,
            Field(description="Permission names granted by the role, e.g. ['orders:read']"),
        ] = None,
    ) -> Role:
        """Create a role in an existing project and return it with its new id."""
        return store.create_role(project_id, role_name, permissions)

    @tool("List projects", READ_ONLY)
    def list_projects() -> ProjectList:
        """List all projects on the platform (without their roles)."""
        return {"projects": store.list_projects()}

    @tool("Get project", READ_ONLY)
    def get_project(project_id: ProjectId) -> ProjectWithRoles:
        """Show one project together with its roles."""
        return store.get_project(project_id)

    @tool("Delete project", DESTRUCTIVE)
    def delete_project(project_id: ProjectId) -> Deleted:
        """Delete a project and all of its roles (cannot be undone)."""
        return {"deleted": store.delete_project(project_id)}

    return server


def resolve_db_path(cli_value: str | None) -> Path:
    """``--db``, else ``$PERMISSION_PLATFORM_DB``, else ``permission-platform.db`` here."""
    return Path(cli_value or os.environ.get(DB_ENV_VAR) or DEFAULT_DB)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Permission platform example MCP server (stdio transport)."
    )
    parser.add_argument(
        "--db",
        metavar="PATH",
        help=f"SQLite database file (default: ${DB_ENV_VAR}, else ./{DEFAULT_DB})",
    )
    args = parser.parse_args(argv)
    build_server(resolve_db_path(args.db)).run("stdio")


if __name__ == "__main__":
    main()
